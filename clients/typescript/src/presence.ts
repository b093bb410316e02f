// Presence is a full snapshot of a player, so only the newest one matters: a game may hand one over on
// every tick, and the client posts at most `perSecond` of them, the latest each time. The first goes
// at once; one more waits for the end of the interval and is replaced by anything newer meanwhile
// (its caller learns it was superseded). One POST at a time, so an older snapshot never lands after a
// newer one.

export interface Superseded {
  superseded: true;
}

interface Pending<T, R> {
  value: T;
  resolve: (r: R | Superseded) => void;
  reject: (e: unknown) => void;
}

export class Coalescer<T, R> {
  private readonly intervalMs: number;
  private readonly send: (value: T) => Promise<R>;
  private pending: Pending<T, R> | null = null;
  private inFlight = false;
  private lastStart = -Infinity;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(perSecond: number, send: (value: T) => Promise<R>) {
    this.intervalMs = 1000 / perSecond;
    this.send = send;
  }

  push(value: T): Promise<R | Superseded> {
    return new Promise((resolve, reject) => {
      this.pending?.resolve({ superseded: true });
      this.pending = { value, resolve, reject };
      this.schedule();
    });
  }

  /** Drops what has not been sent yet (its caller learns it was superseded). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending?.resolve({ superseded: true });
    this.pending = null;
  }

  private schedule(): void {
    if (this.pending === null || this.inFlight || this.timer !== undefined) return;
    const wait = this.lastStart + this.intervalMs - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, wait);
      return;
    }
    const job = this.pending;
    this.pending = null;
    this.inFlight = true;
    this.lastStart = Date.now();
    this.send(job.value)
      .then(job.resolve, job.reject)
      .finally(() => {
        this.inFlight = false;
        this.schedule();
      });
  }
}
