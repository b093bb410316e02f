// How many profile API look-ups run at once, and who waits for a free place. Without it a flood of
// requests with made-up tokens (each a look-up) queued without bound behind the HTTP agent, and a
// real player's new session waited behind all of them.
//
// Two queues: requests whose client credentials are valid go first, and a quarter of the places is
// kept for them, so requests that present none (or wrong ones) can never hold every place. Each
// queue is bounded (PROFILE_API_MAX_QUEUE); beyond it the request is refused at once with 503
// profile_api_busy. A waiter leaves the queue at its deadline (the look-up's timeout counts from when
// it was asked for, not from when a place came free) or when its client goes away.

import { RelayError } from './errors.js';

export interface Ticket {
  /** Resolves when a place is granted; rejects at the deadline or on cancel. */
  granted: Promise<void>;
  /** Gives the place back (after the look-up), or leaves the queue if still waiting. */
  leave(): void;
  /** Leaves the queue if still waiting (nobody wants the look-up any more); a granted place is kept until leave(). */
  cancel(): void;
}

interface Waiter {
  grant(): void;
  fail(e: RelayError): void;
  timer: NodeJS.Timeout;
}

const BUSY_RETRY_SECONDS = 2;

export class LookupGate {
  private readonly places: number;
  /** Places requests without valid credentials may use. */
  private readonly openPlaces: number;
  private readonly maxQueue: number;
  private running = 0;
  private readonly first: Waiter[] = [];
  private readonly rest: Waiter[] = [];

  constructor(places: number, maxQueue: number) {
    this.places = places;
    // With a single place nothing can be kept back: it serves everyone, valid credentials first.
    this.openPlaces = Math.max(1, places - Math.ceil(places / 4));
    this.maxQueue = maxQueue;
  }

  /** Enters the gate; throws 503 profile_api_busy when the queue it would join is full. */
  enter(priority: boolean, timeoutMs: number): Ticket {
    if (this.running < (priority ? this.places : this.openPlaces)) {
      this.running++;
      return { granted: Promise.resolve(), leave: once(() => this.release()), cancel: () => undefined };
    }
    const queue = priority ? this.first : this.rest;
    if (queue.length >= this.maxQueue) {
      throw new RelayError('profile_api_busy', 'Too many sessions are being checked right now; try again shortly.', {
        retryAfter: BUSY_RETRY_SECONDS,
      });
    }
    let waiter!: Waiter;
    let granted = false;
    const promise = new Promise<void>((resolve, reject) => {
      waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          granted = true;
          resolve();
        },
        fail: (e) => {
          clearTimeout(waiter.timer);
          remove(queue, waiter);
          reject(e);
        },
        timer: setTimeout(() => waiter.fail(timedOut(timeoutMs)), timeoutMs),
      };
    });
    // Rejections are read by whoever awaits `granted`; an abandoned ticket must not crash the process.
    promise.catch(() => undefined);
    queue.push(waiter);
    const cancel = (): void => {
      if (!granted) waiter.fail(new RelayError('profile_api_unavailable', 'The look-up was given up before it started.'));
    };
    return {
      granted: promise,
      leave: once(() => {
        if (granted) this.release();
        else cancel();
      }),
      cancel,
    };
  }

  private release(): void {
    this.running--;
    const next = this.first.shift() ?? (this.running < this.openPlaces ? this.rest.shift() : undefined);
    if (next === undefined) return;
    this.running++;
    next.grant();
  }
}

function remove(queue: Waiter[], w: Waiter): void {
  const i = queue.indexOf(w);
  if (i !== -1) queue.splice(i, 1);
}

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}

function timedOut(ms: number): RelayError {
  return new RelayError('profile_api_unavailable', `The game profile API did not answer within ${ms} ms; try again shortly.`, { retryAfter: 5 });
}
