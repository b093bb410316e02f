// After a burst of opens, the heap given back. An open allocates for the length of its round trips
// (session, claim, owner record, replay); in a burst thousands are in flight at once, survive into
// V8's old space and die there, and the old space stays grown and fragmented: a gateway that took
// 17,000 streams at once held 6.8 KiB of heap per stream for 3.4 KiB used, and V8's own memory
// reducer gave it back on some gateways and not others. So once a burst has opened since the last
// compaction and the opens have gone quiet (fewer than 1 % of `burstOpens` in a check period), the
// heap is compacted (compacting-collection.ts). The collection pauses the process in proportion to
// the heap (0.39-0.41 s at 17,000 streams on 2 slow cores, Node 20 and 24) while what it returns follows the burst:
// so a burst is at least `burstOpens` and at least a quarter of the streams held, it waits for
// quiet, and it runs at most once per MIN_INTERVAL_MS. A steady trickle of opens never pays it.
// (How much of the old space is free cannot decide it: its objects count as used until the next
// full collection, which at rest may not come for a long time.)

import type { Histogram } from 'prom-client';
import { compactHeap, oldSpace } from '../core/compacting-collection.js';
import type { Logger } from '../core/logger.js';
import { systemTimers, type CancelTimer, type Timers } from '../core/timers.js';

/** How often the opens of the last period are looked at. */
export const CHECK_EVERY_MS = 5000;
/** A burst is at least this share of the streams held (the pause follows the heap, the gain the burst). */
const BURST_SHARE_OF_HELD = 0.25;
/** Two bursts a few seconds apart (a storm with a lull) are compacted once. */
const MIN_INTERVAL_MS = 60_000;

export interface CompactionResult {
  /** Streams opened since the previous compaction. */
  opens: number;
  ms: number;
  /** Committed old space before and after. */
  before: number;
  after: number;
}

export interface HeapCompactionOptions {
  /** Opens that make a burst; 0: never compact. */
  burstOpens: number;
  /** Streams this gateway holds now. */
  held: () => number;
  timers: Timers;
  now: () => number;
  oldSpace: () => { committed: number };
  compact: () => void;
  compacted: (r: CompactionResult) => void;
}

export class HeapCompaction {
  private readonly o: HeapCompactionOptions;
  private readonly quietBelow: number;
  private opensSince = 0;
  private opensThisPeriod = 0;
  private lastAt = -Infinity;
  private cancel: CancelTimer | null = null;

  /** On this process's V8: each compaction logged, and its pause observed in relay_heap_compaction_seconds. */
  static ofProcess(o: { burstOpens: number; held: () => number; logger: Logger; pauses: Histogram }): HeapCompaction {
    const mib = (n: number): number => Math.round(n / 1048576);
    return new HeapCompaction({
      burstOpens: o.burstOpens,
      held: o.held,
      timers: systemTimers,
      now: () => performance.now(),
      oldSpace,
      compact: compactHeap,
      compacted: (r) => {
        o.pauses.observe(r.ms / 1000);
        o.logger.info({ opens: r.opens, pauseMs: Math.round(r.ms), oldSpaceMiB: [mib(r.before), mib(r.after)] }, 'compacted the heap after a burst of opens');
      },
    });
  }

  constructor(o: HeapCompactionOptions) {
    this.o = o;
    this.quietBelow = Math.max(1, Math.floor(o.burstOpens / 100));
  }

  start(): void {
    if (this.o.burstOpens > 0 && this.cancel === null) this.schedule();
  }

  /** A stream opened. */
  opened(): void {
    this.opensSince++;
    this.opensThisPeriod++;
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  private schedule(): void {
    this.cancel = this.o.timers.after(CHECK_EVERY_MS, () => {
      this.check();
      if (this.cancel !== null) this.schedule();
    });
  }

  private check(): void {
    const quiet = this.opensThisPeriod < this.quietBelow;
    this.opensThisPeriod = 0;
    const burst = Math.max(this.o.burstOpens, this.o.held() * BURST_SHARE_OF_HELD);
    if (!quiet || this.opensSince < burst || this.o.now() - this.lastAt < MIN_INTERVAL_MS) return;
    const before = this.o.oldSpace();
    const t0 = this.o.now();
    this.o.compact();
    const ms = this.o.now() - t0;
    this.o.compacted({ opens: this.opensSince, ms, before: before.committed, after: this.o.oldSpace().committed });
    this.opensSince = 0;
    this.lastAt = this.o.now();
  }
}
