// What the harness tells a load generator over IPC (loadgen.ts runs them, loadgen-client.ts sends them).

import type { Endpoint } from './http-conn.js';

export interface StreamSpec {
  endpoint: Endpoint;
  count: number;
  /** Raw GET request; {i} and {channel} are substituted. */
  template: string;
  channels: string[];
  /** Text that tells the stream is open and subscribed. */
  readyMarker: string;
  concurrency: number;
  /** Index offset for {i} (to open more streams later with distinct identities). */
  offset?: number;
  /**
   * Channel sizes: every channel gets its count of streams, spread over the index range in a
   * fixed shuffled order, instead of `channels` round robin (the scale scenario's spread).
   */
  plan?: Array<{ channel: string; count: number }>;
  /**
   * Reopen a refused stream as the published client does (docs/real-clients: 1 s x 2^n, at most
   * 30 s), until it is open or `retry.untilMs` after the start; refusals are counted apart.
   */
  retry?: { untilMs: number };
  /**
   * Open as the published client reconnects: with Last-Event-ID, the last id this stream index saw
   * (kept across dropAll), or `lastEventId` when it saw none yet.
   */
  resume?: { lastEventId: number };
}

export interface PublishSpec {
  endpoint: Endpoint;
  /** {channel} is substituted. */
  path: string;
  headers: Record<string, string>;
  /** JSON body; {channel} and {ts} are substituted ({ts}: the send time in ms). */
  body: string;
  channels: string[];
  perSecond: number;
  connections: number;
}

export type Command =
  | { cmd: 'open'; spec: StreamSpec }
  | { cmd: 'fanout'; publish: PublishSpec; warmupMs: number; measureMs: number }
  /** Measures what arrives on this generator's streams while another one publishes. */
  | { cmd: 'listen'; warmupMs: number; measureMs: number }
  | { cmd: 'pause'; index: number }
  | { cmd: 'dropAll' }
  | { cmd: 'count' }
  | { cmd: 'ingress'; endpoint: Endpoint; request: string; connections: number; warmupMs: number; measureMs: number }
  | { cmd: 'evict'; first: StreamSpec; second: StreamSpec; trials: number }
  | { cmd: 'exit' };
