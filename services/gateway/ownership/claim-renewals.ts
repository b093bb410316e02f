// When each live claim is rewritten, before the bucket's max age would drop it: the renewal period
// (CLAIM_TTL/2) is cut in ticks of a second and each claim is renewed at its own tick, a steady
// trickle rather than every claim at once, which at 100,000 claims held up the writes of evictions
// behind it (docs/BENCHMARKS.md, scale, ownership). IN_FLIGHT.renewals at a time (in-flight.ts).

import { IN_FLIGHT } from './in-flight.js';

const RENEWAL_TICK_MS = 1000;

export class RenewalSchedule<T> {
  /** Rewrites the item; resolves true once it is written, false when it could not be. */
  private readonly renew: (item: T) => Promise<boolean>;
  /** Each item's tick within the period, and when it was last written (ms). */
  private readonly items = new Map<T, { slice: number; writtenAt: number }>();
  /** Due, in the order they fell due, each once (when NATS is slower than the ticks, this is what is behind). */
  private readonly due = new Set<T>();
  private renewing = 0;
  private tick = 0;
  private slices = 1;
  private timer: NodeJS.Timeout | undefined;

  constructor(renew: (item: T) => Promise<boolean>) {
    this.renew = renew;
  }

  start(periodMs: number): void {
    this.slices = Math.max(1, Math.floor(periodMs / RENEWAL_TICK_MS));
    this.timer = setInterval(() => void this.onTick(), RENEWAL_TICK_MS).unref();
  }

  add(item: T): void {
    this.items.set(item, { slice: Math.floor(Math.random() * this.slices), writtenAt: Date.now() });
  }

  delete(item: T): void {
    this.items.delete(item);
    this.due.delete(item);
  }

  /** Runs one tick now (the timer's work; tests call it). Resolves when the tick's renewals are done. */
  async onTick(): Promise<void> {
    const slice = this.tick++ % this.slices;
    for (const [item, s] of this.items) if (s.slice === slice) this.due.add(item);
    const workers: Promise<void>[] = [];
    while (this.renewing < IN_FLIGHT.renewals && this.due.size > 0) {
      this.renewing++;
      workers.push(this.work().finally(() => this.renewing--));
    }
    await Promise.all(workers);
  }

  private async work(): Promise<void> {
    for (;;) {
      const next = this.due.values().next();
      if (next.done === true) return;
      this.due.delete(next.value);
      const written = await this.renew(next.value).catch(() => false);
      const entry = this.items.get(next.value);
      if (written && entry !== undefined) entry.writtenAt = Date.now();
    }
  }

  /**
   * How far the least recently written item is past its renewal (0 while renewals keep up): what
   * `relay_ownership_renewal_overdue_seconds` reports, before claims age out of the bucket.
   */
  overdueMs(now = Date.now()): number {
    let oldest = now;
    for (const { writtenAt } of this.items.values()) if (writtenAt < oldest) oldest = writtenAt;
    return Math.max(0, now - oldest - (this.slices + 1) * RENEWAL_TICK_MS);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }
}
