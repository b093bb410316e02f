// After a burst of opens, the heap given back. An open allocates for the length of its round trips
// (session, census, claim, replay); in a burst thousands are in flight at once, survive into
// V8's old space and die there, and the old space stays grown and fragmented: a gateway that took
// 17,000 streams at once held 6.8 KiB of heap per stream for 3.4 KiB used, and V8's own memory
// reducer gave it back on some gateways and not others. So after a burst the heap is compacted
// (compacting-collection.ts), once the burst is over. The collection pauses the whole process, in
// proportion to the live heap (0.39-0.41 s at 17,000 streams on 2 slow cores), hence the rule:
//  - a burst is `burstOpens` opens within a minute (BURST_WINDOW_PERIODS): ordinary churn, however
//    long it runs, is not one;
//  - it is over at the first check period with fewer opens than a tenth of its busiest period, so
//    the churn that goes on after a storm does not hold the compaction back;
//  - it is worth a pause only if it opened at least a quarter of the streams held (the pause
//    follows the heap, what comes back follows the burst);
//  - at most one compaction a minute: a burst that ends sooner waits.
// Whoever can open that many streams a minute (many accounts, or one with STREAM_OPEN_RATE=0) can
// cause one pause a minute; docs/OPERATIONS.md says so, and how to turn it off.

import type { Histogram } from 'prom-client';
import { compactHeap, compactionUnavailable, oldSpaceCommitted } from '../core/compacting-collection.js';
import type { Logger } from '../core/logger.js';
import { systemTimers, type CancelTimer, type Timers } from '../core/timers.js';

/**
 * How often the opens of the last period are looked at: the compaction comes within two of them
 * after the opens stop (with 5 s periods it came 5-10 s after them, and the memory a storm left
 * was read high all that while).
 */
export const CHECK_EVERY_MS = 1000;
/** A burst is `burstOpens` opens within this many check periods (a minute). */
export const BURST_WINDOW_PERIODS = 60;
/** A period with fewer opens than this share of the burst's busiest period ends the burst. */
const QUIET_SHARE = 0.1;
/** A burst is worth a pause if it opened at least this share of the streams held. */
const BURST_SHARE_OF_HELD = 0.25;
/** Two bursts a few seconds apart (a storm with a lull) are compacted once. */
const MIN_INTERVAL_MS = 60_000;

export interface CompactionResult {
  /** Streams the burst opened. */
  opens: number;
  ms: number;
  /** Committed old space before and after. */
  before: number;
  after: number;
}

export interface HeapCompactionOptions {
  /** Opens within a minute that make a burst; 0: never compact. */
  burstOpens: number;
  /** Streams this gateway holds now. */
  held: () => number;
  timers: Timers;
  now: () => number;
  /** Bytes committed to the old space. */
  oldSpace: () => number;
  compact: () => void;
  compacted: (r: CompactionResult) => void;
}

export class HeapCompaction {
  private readonly o: HeapCompactionOptions;
  private opensThisPeriod = 0;
  /** Opens of the last BURST_WINDOW_PERIODS periods, oldest first. */
  private window: number[] = [];
  private burst: { opens: number; busiest: number } | null = null;
  private lastAt = -Infinity;
  private cancel: CancelTimer | null = null;

  /** On this process's V8: each compaction logged, and its pause observed in relay_heap_compaction_seconds. */
  static ofProcess(o: { burstOpens: number; held: () => number; logger: Logger; pauses: Histogram }): HeapCompaction {
    const unavailable = o.burstOpens > 0 ? compactionUnavailable() : null;
    if (unavailable !== null) o.logger.warn({ setting: 'HEAP_COMPACTION_AFTER_OPENS' }, `the heap is not compacted after bursts of opens: ${unavailable}`);
    const mib = (n: number): number => Math.round(n / 1048576);
    return new HeapCompaction({
      burstOpens: unavailable === null ? o.burstOpens : 0,
      held: o.held,
      timers: systemTimers,
      now: () => performance.now(),
      oldSpace: oldSpaceCommitted,
      compact: compactHeap,
      compacted: (r) => {
        o.pauses.observe(r.ms / 1000);
        o.logger.info({ opens: r.opens, pauseMs: Math.round(r.ms), oldSpaceMiB: [mib(r.before), mib(r.after)] }, 'compacted the heap after a burst of opens');
      },
    });
  }

  constructor(o: HeapCompactionOptions) {
    this.o = o;
  }

  start(): void {
    if (this.o.burstOpens > 0 && this.cancel === null) this.schedule();
  }

  /** A stream opened. */
  opened(): void {
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
    const opens = this.opensThisPeriod;
    this.opensThisPeriod = 0;
    this.window.push(opens);
    if (this.window.length > BURST_WINDOW_PERIODS) this.window.shift();
    if (this.burst === null) {
      const inWindow = this.window.reduce((s, n) => s + n, 0);
      if (inWindow >= this.o.burstOpens) this.burst = { opens: inWindow, busiest: Math.max(...this.window) };
      return;
    }
    const burst = this.burst;
    burst.opens += opens;
    burst.busiest = Math.max(burst.busiest, opens);
    if (opens >= burst.busiest * QUIET_SHARE || this.o.now() - this.lastAt < MIN_INTERVAL_MS) return;
    // Over: its opens start no burst again.
    this.burst = null;
    this.window = [];
    if (burst.opens < this.o.held() * BURST_SHARE_OF_HELD) return;
    const before = this.o.oldSpace();
    const t0 = this.o.now();
    this.o.compact();
    const ms = this.o.now() - t0;
    this.lastAt = this.o.now();
    this.o.compacted({ opens: burst.opens, ms, before, after: this.o.oldSpace() });
  }
}
