// Ending a child process that dev, the mesh script, tests or benchmarks started: a signal, a wait
// for it to go, and SIGKILL for one that outstays its grace.
import type { ChildProcess } from 'node:child_process';

/** Resolves with the exit code when the child exits. Call it right after spawn: a late listener misses the event. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Sends `signal` (SIGTERM: a graceful stop) unless the child has gone already, and resolves with its
 * exit code once it has; past `killAfterMs`, SIGKILL. Without `killAfterMs` it waits as long as the
 * child takes (a test that checks a graceful exit wants exactly that).
 */
export async function endChild(
  child: ChildProcess,
  exited: Promise<number | null>,
  options: { signal?: NodeJS.Signals; killAfterMs?: number } = {},
): Promise<number | null> {
  if (!running(child)) return exited;
  child.kill(options.signal ?? 'SIGTERM');
  const timer = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
