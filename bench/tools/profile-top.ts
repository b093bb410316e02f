// Summarises V8 .cpuprofile files (merged when several): self time per file or package and per
// function, heaviest first, as shares of the busy (not idle) time.
// npx tsx bench/tools/profile-top.ts <file.cpuprofile>... [--rows N]
import { readProfile, summarize } from '../lib/profile-summary.js';

const args = process.argv.slice(2);
const rowsAt = args.indexOf('--rows');
const rows = rowsAt === -1 ? 30 : Number(args[rowsAt + 1]);
const files = args.filter((a, i) => a !== '--rows' && i !== rowsAt + 1);
if (files.length === 0) {
  process.stderr.write('usage: npx tsx bench/tools/profile-top.ts <file.cpuprofile>... [--rows N]\n');
  process.exit(2);
}
const s = summarize(files.map(readProfile), rows);
console.log(`sampled ${s.totalMs.toFixed(0)} ms, idle ${((s.idleMs / Math.max(1, s.totalMs)) * 100).toFixed(1)} %; shares below are of the busy time`);
for (const [title, list] of [['self time by file/package', s.byFile], ['self time by function', s.byFunction]] as const) {
  console.log(`\n${title}`);
  for (const [k, v] of list) console.log(`${v.toFixed(1).padStart(5)}%  ${k}`);
}
