// What a scenario needs from a system under test: how to open streams, how to publish, and which
// processes to measure.
import type { PublishSpec, StreamSpec } from '../lib/loadgen.js';

export interface System {
  name: string;
  /** Processes whose CPU and memory count as the system's. */
  pids(): number[];
  /** The process holding the SSE connections (memory per stream is measured on it). */
  streamPid(): number;
  streamSpec(count: number, channels: string[], concurrency: number): StreamSpec;
  publishSpec(channels: string[], perSecond: number, connections: number): PublishSpec;
  stop(): Promise<void>;
}

export const PAYLOAD_BODY = '{"type":"chat","message":"t={ts}"}';

export function channelNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `bench-${i + 1}.example.net`);
}
