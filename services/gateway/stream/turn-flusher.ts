// Write coalescing for every stream of a gateway: streams with frames queued are written once per
// event-loop turn (one write per stream however many frames arrived), and the counting that goes
// with the writes (frames delivered, presence snapshots replaced, delivery lag) is done once per turn.

import type { RelayMetrics } from '../../core/metrics.js';
import type { ClientStream } from './client-stream.js';
import type { FlushScheduler } from './stream-context.js';

/** What the delivery lag is measured on: the ingress's publish time (epoch ms). */
interface Published {
  readonly publishedAt: number;
}

export class TurnFlusher implements FlushScheduler {
  private readonly metrics: RelayMetrics;
  private dirty: ClientStream[] = [];
  private turnFrames: Published[] = [];
  /** Presence snapshots replaced in the streams' queues since the last flush. */
  private coalesced = 0;
  private flushScheduled = false;

  constructor(metrics: RelayMetrics) {
    this.metrics = metrics;
  }

  markDirty(stream: ClientStream): void {
    this.dirty.push(stream);
    this.schedule();
  }

  countCoalesced(): void {
    this.coalesced++;
    this.schedule();
  }

  /** A live frame some stream heard: its delivery lag is observed when the turn is written. */
  heard(frame: Published): void {
    this.turnFrames.push(frame);
    this.schedule();
  }

  private schedule(): void {
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushAll());
    }
  }

  /** One write per dirty stream per event-loop turn. */
  private flushAll(): void {
    this.flushScheduled = false;
    const dirty = this.dirty;
    this.dirty = [];
    let pairs = 0;
    for (const s of dirty) pairs += s.flush();
    if (pairs > 0) this.metrics.framesDelivered.inc(pairs);
    if (this.coalesced > 0) this.metrics.framesDropped.inc({ reason: 'coalesced' }, this.coalesced);
    this.coalesced = 0;
    const now = Date.now();
    for (const f of this.turnFrames) this.metrics.deliveryLag.observe((now - f.publishedAt) / 1000);
    this.turnFrames = [];
  }
}
