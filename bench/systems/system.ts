import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOG_DIR } from '../lib/procs.js';
// What a scenario needs from a system under test: how to open streams, how to publish, and which
// processes to measure.
import type { PublishSpec, StreamSpec } from '../lib/loadgen-commands.js';

export interface System {
  name: string;
  /** Processes whose CPU and memory count as the system's. */
  pids(): number[];
  /** The process holding the SSE connections (memory per stream is measured on it). */
  streamPid(): number;
  /** Where that process writes process.memoryUsage() after a forced GC (SIGUSR2), if it does. */
  memoryFile?: string;
  streamSpec(count: number, channels: string[], concurrency: number): StreamSpec;
  publishSpec(channels: string[], perSecond: number, connections: number): PublishSpec;
  stop(): Promise<void>;
}

/**
 * The environment every Node system under test runs with. glibc gives each thread its own malloc
 * arena; with V8's helper threads that fragments a long-lived server's native memory (RSS per idle
 * stream measured 17.6 KiB with the default, 11.1 KiB with one arena). Production images set 2
 * (Dockerfile); every Node system here gets the same, so memory is compared like for like.
 */
export const NODE_ENV_FOR_SYSTEMS = { MALLOC_ARENA_MAX: '2' };

/** Where a system's stream-holding process reports its memory after a forced GC. */
export function memoryFileFor(name: string): string {
  return join(LOG_DIR, `memory-${name}.json`);
}

/** Node flags for the process holding the streams: SIGUSR2 makes it collect garbage (memory scenario). */
export const GC_ON_SIGNAL = ['--expose-gc', '--import', 'tsx', '--import', fileURLToPath(new URL('../peers/gc-on-signal.ts', import.meta.url))];

export const PAYLOAD_BODY = '{"type":"chat","message":"t={ts}"}';

export function channelNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `bench-${i + 1}.example.net`);
}
