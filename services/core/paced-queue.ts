// Writes to a bucket a few at a time. When a gateway loses every client at once (their network
// blinked, a load balancer restarted), one write per ended stream fired at once put thousands of
// requests in front of the writes of the streams reopening that same second: on a replicated
// bucket those timed out and the opens were refused (docs/BENCHMARKS.md, scale --cluster storm).
// The claims' deletes (claim-releases.ts) go through one of these.

import { ArrayQueue } from './array-queue.js';
import { systemTimers, type Timers } from './timers.js';

export class PacedQueue<T> {
  private readonly queue = new ArrayQueue<T>();
  private inFlight = 0;
  /** Items waiting to be tried again (`retryLater`). */
  private held = 0;
  private idle: Array<() => void> = [];

  /** `work` must not reject: a failure it wants tried again goes back through `retryLater`. */
  constructor(
    private readonly limit: number,
    private readonly work: (item: T) => Promise<void>,
    private readonly timers: Timers = systemTimers,
  ) {}

  add(item: T): void {
    this.queue.push(item);
    this.next();
  }

  /** Queues the item again after `ms`, counted as pending meanwhile. */
  retryLater(item: T, ms: number): void {
    this.held++;
    this.timers.after(ms, () => {
      this.held--;
      this.add(item);
    });
  }

  /** Items waiting, being worked on, or held for a retry. */
  private get pending(): number {
    return this.queue.length + this.inFlight + this.held;
  }

  /** Resolves once every item added so far is done. */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private next(): void {
    while (this.inFlight < this.limit && this.queue.length > 0) {
      const item = this.queue.shift()!;
      this.inFlight++;
      void this.work(item).finally(() => {
        this.inFlight--;
        this.next();
      });
    }
    if (this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
  }
}
