// Child processes of a benchmark: started by the harness, measured through /proc (CPU time and RSS,
// whatever language they are written in), and stopped exactly when the scenario ends.

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { endChild, exitOf } from '../../tools/child.js';
import type { PollOptions } from '../../tools/poll.js';

const CLK_TCK = 100;
export const LOG_DIR = join(process.cwd(), 'bench', 'results', 'logs');
/** How long a system under test may take to answer after its processes start. */
export const BENCH_START: PollOptions = { timeoutMs: 30_000, intervalMs: 50 };

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function startProc(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  mkdirSync(LOG_DIR, { recursive: true });
  const log = createWriteStream(join(LOG_DIR, `${name}.log`));
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = exitOf(child);
  return {
    name,
    child,
    pid: child.pid!,
    async stop(signal = 'SIGTERM') {
      await endChild(child, exited, { signal, killAfterMs: 10_000 });
    },
  };
}

/** User+system CPU seconds a process (and nothing else) has used so far. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Measures CPU use of a set of processes over an interval, as a percentage of one core. */
export class CpuMeter {
  private readonly pids: number[];
  private start = 0;
  private startTime = 0;
  constructor(pids: number[]) {
    this.pids = pids;
  }
  begin(): void {
    this.start = this.pids.reduce((s, p) => s + cpuSeconds(p), 0);
    this.startTime = performance.now();
  }
  percent(): number {
    const used = this.pids.reduce((s, p) => s + cpuSeconds(p), 0) - this.start;
    const elapsed = (performance.now() - this.startTime) / 1000;
    return elapsed > 0 ? (used / elapsed) * 100 : 0;
  }
}
