// Self time of V8 CPU profiles (.cpuprofile), by function and by file or package, heaviest first.
// Several profiles (one per gateway) merge into one summary. Idle time is kept apart: shares are of
// the time the process was busy.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Sampled time, ms. */
  totalMs: number;
  idleMs: number;
  /** [name, share of busy time in %], heaviest first. */
  byFile: Array<[string, number]>;
  byFunction: Array<[string, number]>;
}

export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/** Where a script lives, shortened: a package (nm:name) or our own path under services/ or schemas/. */
function place(url: string): string {
  return url.replace(/^.*node_modules\//, 'nm:').replace(/^file:\/\/.*?\/(services|schemas)\//, '$1/') || '(native)';
}

/** Line numbers mean nothing in our own files (tsx compiles them on load); in packages they do. */
function where(url: string, line: number): string {
  const file = place(url);
  return url === '' || file.startsWith('services/') || file.startsWith('schemas/') ? file : `${file}:${line + 1}`;
}

/** Nodes under a frame of the bench's own profiler preload: the profile's own cost, not the relay's. */
function profilerOwn(profile: CpuProfile): Set<number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const own = new Set<number>();
  const mark = (id: number): void => {
    own.add(id);
    for (const c of byId.get(id)?.children ?? []) mark(c);
  };
  for (const n of profile.nodes) if (n.callFrame.url.includes('profile-on-signal')) mark(n.id);
  return own;
}

export function summarize(profiles: CpuProfile[], rows = 15): ProfileSummary {
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const profile of profiles) {
    const self = new Map<number, number>();
    profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
    const skip = profilerOwn(profile);
    for (const n of profile.nodes) {
      const t = self.get(n.id) ?? 0;
      if (t === 0 || skip.has(n.id)) continue;
      total += t;
      if (n.callFrame.functionName === '(idle)') {
        idle += t;
        continue;
      }
      const file = place(n.callFrame.url);
      const fn = `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url, n.callFrame.lineNumber)}`;
      byFn.set(fn, (byFn.get(fn) ?? 0) + t);
      const pkg = file.startsWith('nm:') ? file.split('/').slice(0, file.startsWith('nm:@') ? 2 : 1).join('/') : file;
      byFile.set(pkg, (byFile.get(pkg) ?? 0) + t);
    }
  }
  const busy = Math.max(1, total - idle);
  const top = (m: Map<string, number>): Array<[string, number]> =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, rows)
      .map(([k, v]) => [k, (v / busy) * 100]);
  return { totalMs: total / 1000, idleMs: idle / 1000, byFile: top(byFile), byFunction: top(byFn) };
}
