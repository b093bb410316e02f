// Deleting the claims of ended streams, a few at a time. When a gateway loses every client at once
// (its clients' network blinked, a load balancer restarted), firing one KV delete per stream put
// thousands of requests in front of the claims of the streams reopening that same second: on a
// replicated bucket those timed out and the opens were refused (docs/BENCHMARKS.md, scale --cluster
// storm). Paced, the opens' claims go first, and a delete whose key a newer claim has already taken
// (the client came back, here or on another gateway) is not sent at all: the server would refuse it.

import type { KV } from '@nats-io/kv';

/** A claim to delete: its key and the revision it was written at. */
export interface ReleasedClaim {
  readonly key: string;
  readonly revision: number;
}

/** Deletes in flight at once per gateway. */
const DELETES_IN_FLIGHT = 32;

export class ClaimReleases {
  private readonly kv: KV;
  /** Whether a newer write to the key is known (a newer claim): then there is nothing to delete. */
  private readonly superseded: (claim: ReleasedClaim) => boolean;
  private readonly queue: ReleasedClaim[] = [];
  private head = 0;
  private inFlight = 0;
  private idle: Array<() => void> = [];

  constructor(kv: KV, superseded: (claim: ReleasedClaim) => boolean) {
    this.kv = kv;
    this.superseded = superseded;
  }

  /** Deletes the claim unless a newer one has replaced it by the time its turn comes. */
  add(claim: ReleasedClaim): void {
    this.queue.push(claim);
    if (this.inFlight < DELETES_IN_FLIGHT) this.next();
  }

  /** Claims waiting or being deleted. */
  get pending(): number {
    return this.queue.length - this.head + this.inFlight;
  }

  /** Resolves once every claim released so far is deleted (or found replaced). */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private next(): void {
    while (this.inFlight < DELETES_IN_FLIGHT && this.head < this.queue.length) {
      const claim = this.queue[this.head++]!;
      if (this.superseded(claim)) continue;
      this.inFlight++;
      // Refused by the server when a later claim replaced ours meanwhile, which is what we want.
      void this.kv
        .delete(claim.key, { previousSeq: claim.revision })
        .catch(() => undefined)
        .finally(() => {
          this.inFlight--;
          this.next();
        });
    }
    // Compact now and then rather than shifting on every claim.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.pending === 0) {
      const waiting = this.idle;
      this.idle = [];
      for (const resolve of waiting) resolve();
    }
  }
}
