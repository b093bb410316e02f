// Summarises a V8 .cpuprofile: self time per function and per file, heaviest first.
// npx tsx bench/tools/profile-top.ts <file.cpuprofile> [rows]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const rows = Number(process.argv[3] ?? 30);
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byFn = new Map<string, number>();
const byFile = new Map<string, number>();
for (const n of profile.nodes) {
  const t = self.get(n.id) ?? 0;
  const file = n.callFrame.url.replace(/^.*node_modules\//, 'nm:').replace(/^file:\/\/.*?\/(services|schemas)\//, '$1/') || '(native)';
  const fn = `${n.callFrame.functionName || '(anon)'}  ${file}:${n.callFrame.lineNumber + 1}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + t);
  const pkg = file.startsWith('nm:') ? file.split('/').slice(0, file.startsWith('nm:@') ? 2 : 1).join('/') : file;
  byFile.set(pkg, (byFile.get(pkg) ?? 0) + t);
}
const show = (m: Map<string, number>, title: string): void => {
  console.log(`\n${title} (total ${(total / 1000).toFixed(0)} ms)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
};
show(byFile, 'self time by file/package');
show(byFn, 'self time by function');
