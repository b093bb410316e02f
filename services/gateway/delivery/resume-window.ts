// The resume window: the most recent frames of every channel this gateway subscribes to, kept so
// a client reconnecting with Last-Event-ID is answered from memory when the window covers what it
// missed, without a JetStream request. Bounded in bytes for the whole gateway (RESUME_WINDOW_BYTES):
// past the bound the oldest frame of all goes, whichever channel it belongs to.
//
// A window knows from which sequence on it holds every frame of its channel (`coverFrom`): the
// RePublish header Nats-Last-Sequence of the first frame it hears names the frame before it on the
// same subject, so everything after that one is in the window; evicting a frame moves the mark up
// to it; a hole in the live feed that could not be filled moves it past the hole.
//
// A window's frames are kept in sequence order, so a resume finds where it starts by binary search:
// a resume at the newest id (the usual reconnect) costs the same whatever the window holds.
// Only a bridge's window, which hears every subject, can hear a frame out of order (a gap of one
// subject filled from the log after later frames of others): it is inserted in its place.

import { ArrayQueue } from '../../core/array-queue.js';
import type { RelayMetrics } from '../../core/metrics.js';
import type { Frame } from './frame.js';

/** Bookkeeping per kept frame besides its bytes (the entry, its slots in two queues). */
const ENTRY_OVERHEAD = 64;

const sizeOf = (f: Frame): number => f.bytes.length + ENTRY_OVERHEAD;

export class ChannelWindow {
  /** Every frame after this sequence has reached the window (or been evicted past); null: unknown. */
  private coverFrom: number | null = null;
  private newestSeq = 0;
  private readonly frames = new ArrayQueue<Frame>();
  private keptBytes = 0;
  private isDropped = false;

  /** Highest sequence this gateway knows the channel has. */
  get newest(): number {
    return this.newestSeq;
  }

  /** Nothing reached the window yet, and nothing was learnt of the channel: a look-up would tell. */
  get cold(): boolean {
    return this.coverFrom === null && this.newestSeq === 0;
  }

  /** Dropped with its group: its frames no longer count, and nothing is added. */
  get dropped(): boolean {
    return this.isDropped;
  }

  get size(): number {
    return this.frames.length;
  }

  /** What its frames weigh against the gateway's budget. */
  get bytes(): number {
    return this.keptBytes;
  }

  /** The window can answer a client that has every frame up to `lastId`. */
  covers(lastId: number): boolean {
    // Not an id past the newest heard: this gateway may be behind the one the client came from,
    // and frames up to that id, arriving late, would be sent again (the log knows; seed 2029).
    return this.coverFrom !== null && lastId >= this.coverFrom && lastId <= this.newestSeq;
  }

  /**
   * Every frame after `lastId` reaches the window, now or later: true also for an id past the newest
   * heard (this gateway is behind the client's previous one, and its feed brings the rest).
   */
  follows(lastId: number): boolean {
    return this.coverFrom !== null && lastId >= this.coverFrom;
  }

  /** Frames after `lastId`, in sequence order. */
  since(lastId: number): Frame[] {
    return this.frames.from(this.firstAfter(lastId));
  }

  /** Place of the first kept frame whose sequence is above `seq` (the end when there is none). */
  private firstAfter(seq: number): number {
    let lo = 0;
    let hi = this.frames.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.frames.at(mid)!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Sequence `seq` was heard (kept or not); `previous` is the one before it on its subject when the
   * live feed says so (null for a frame read from the log).
   */
  heard(seq: number, previous: number | null): void {
    // The first frame heard names the one before it on its subject: all after that one is here.
    if (this.coverFrom === null && previous !== null) this.coverFrom = previous;
    if (seq > this.newestSeq) this.newestSeq = seq;
  }

  /** The channel's newest frame was `seq` (0: none) when nothing had reached the window yet. */
  learn(seq: number): void {
    if (this.cold) this.coverFrom = seq;
    if (seq > this.newestSeq) this.newestSeq = seq;
  }

  /**
   * Frames up to `seq` may be missing (evicted, not kept, or a gap that could not be filled): cover
   * only what follows.
   */
  skipTo(seq: number): void {
    if (this.coverFrom !== null && seq > this.coverFrom) this.coverFrom = seq;
    if (seq > this.newestSeq) this.newestSeq = seq;
  }

  /** Nothing is known any more (the live feed was down and could not be caught up). */
  forget(): void {
    this.coverFrom = null;
  }

  /** @internal Used by ResumeWindows. */
  push(frame: Frame): void {
    const last = this.frames.last();
    if (last === undefined || frame.seq > last.seq) this.frames.push(frame);
    else this.frames.insert(this.firstAfter(frame.seq), frame);
    this.keptBytes += sizeOf(frame);
  }

  /** @internal Used by ResumeWindows: drops the frame of the lowest sequence, returning its size. */
  shift(): number {
    const f = this.frames.shift()!;
    this.skipTo(f.seq);
    const size = sizeOf(f);
    this.keptBytes -= size;
    return size;
  }

  /** @internal Used by ResumeWindows: its group went away. */
  markDropped(): void {
    this.isDropped = true;
  }
}

/** Every window of one gateway, under one byte budget. */
export class ResumeWindows {
  private readonly maxBytes: number;
  private readonly metrics: RelayMetrics;
  /**
   * Whose frame goes next, in arrival order over all windows; the window then drops its lowest
   * sequence, which is its oldest frame but for a bridge's late-filled gap.
   */
  private readonly order = new ArrayQueue<ChannelWindow>(4096);
  private bytes = 0;
  /** Queue slots of dropped windows not yet passed by eviction. */
  private deadSlots = 0;

  constructor(maxBytes: number, metrics: RelayMetrics) {
    this.maxBytes = maxBytes;
    this.metrics = metrics;
  }

  /** A frame reached a window: keeps it, and evicts the oldest frames past the budget. */
  record(window: ChannelWindow, frame: Frame, previous: number | null): void {
    window.heard(frame.seq, previous);
    if (window.dropped) return;
    if (this.maxBytes === 0) {
      window.skipTo(frame.seq);
      return;
    }
    window.push(frame);
    this.order.push(window);
    this.bytes += sizeOf(frame);
    while (this.bytes > this.maxBytes && this.order.length > 0) {
      const oldest = this.order.shift()!;
      if (oldest.dropped) this.deadSlots--;
      else this.bytes -= oldest.shift();
    }
    this.compact();
    this.metrics.resumeWindowBytes.set(this.bytes);
  }

  /** The group went away: its frames stop counting at once (their queue slots go lazily). */
  drop(window: ChannelWindow): void {
    if (window.dropped) return;
    window.markDropped();
    this.bytes -= window.bytes;
    this.deadSlots += window.size;
    this.metrics.resumeWindowBytes.set(this.bytes);
  }

  /** Slots of dropped windows are skipped at eviction; when they are most of the queue, it is rebuilt. */
  private compact(): void {
    if (this.deadSlots > 4096 && this.deadSlots * 2 > this.order.length) {
      this.order.retain((w) => !w.dropped);
      this.deadSlots = 0;
    }
  }
}
