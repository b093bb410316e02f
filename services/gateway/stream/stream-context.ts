// What a stream is given when it is made, and what it promises back: who it is (from admission),
// what every stream of a gateway shares (the turn flusher, the queue bound, the end callback), what
// it needs of a frame, and what it says became of one.

import type { ClientStream } from './client-stream.js';
import type { CloseReason } from './close-reason.js';
import type { LogPosition } from './log-position.js';
import type { QueuedFrame } from './presence-coalescing.js';

export interface StreamIdentity {
  id: string;
  account: string | null;
  clientId: string;
  /** Readable channel, or null for a bridge stream hearing every channel. */
  channel: string | null;
  receiveMask: number;
  bridge: boolean;
  /** The client's user agent as it named itself, for operators (the console's streams). */
  agent: string | null;
}

/** What a stream needs of a frame: its place in the log (0: not in it), and what its queue reads. */
export interface StreamFrame extends QueuedFrame {
  readonly seq: number;
  /** With regions: the region whose log `seq` is in (region-seen.ts). */
  readonly region?: string;
  /** With regions: its group's position once it is delivered (what its shared bytes' id says). */
  readonly position?: LogPosition;
  /** With regions: the frame's bytes with another id. */
  readonly withId?: (id: string) => Buffer;
}

/**
 * What became of a frame handed to a stream: queued, queued in place of an older presence snapshot
 * of its sender, dropped with the stream closed as a slow consumer, or skipped (the stream ended, or
 * had the frame already).
 */
export type Delivery = 'queued' | 'coalesced' | 'dropped' | 'skipped';

/** Batches the writes of one event-loop turn, and the counting that goes with them. */
export interface FlushScheduler {
  markDirty(stream: ClientStream): void;
  /** A waiting presence snapshot was replaced by a newer one (counted once per turn, not per frame). */
  countCoalesced(): void;
}

/** What every stream of a gateway shares: one object for all rather than fields on each. */
export interface StreamContext {
  readonly scheduler: FlushScheduler;
  readonly maxQueuedBytes: number;
  /** Told once when a stream ends, whoever ended it: the one path that undoes its open. */
  readonly ended: (stream: ClientStream, reason: CloseReason) => void;
  /** This Node's HTTP server could not hand a stream's socket over (stream/bare-socket.ts). */
  readonly stayedOnHttp: () => void;
}
