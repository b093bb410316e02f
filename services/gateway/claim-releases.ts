// Deleting the claims of ended streams, a few at a time. When a gateway loses every client at once
// (its clients' network blinked, a load balancer restarted), firing one KV delete per stream put
// thousands of requests in front of the claims of the streams reopening that same second: on a
// replicated bucket those timed out and the opens were refused (docs/BENCHMARKS.md, scale --cluster
// storm). Paced, the opens' claims go first, and a delete whose key a newer claim has already taken
// (the client came back, here or on another gateway) is not sent at all: the server would refuse it.

import type { ClaimStore } from './claim-store.js';

/** A claim to delete: its key, the revision it was written at, and the stream that held it. */
export interface ReleasedClaim {
  readonly key: string;
  readonly revision: number;
  readonly conn: string;
}

/** Deletes in flight at once per gateway. */
const DELETES_IN_FLIGHT = 32;
/** A delete that failed while the claim is still ours (a timeout, a reconnect) is tried again. */
const ATTEMPTS = 5;
const RETRY_MS = 1000;

interface Queued {
  readonly key: string;
  revision: number;
  readonly conn: string;
  attempt: number;
}

export class ClaimReleases {
  private readonly store: ClaimStore;
  /** Copies of what to delete, never the stream: a closed stream is not kept alive by its delete. */
  private queue: Queued[] = [];
  private head = 0;
  private inFlight = 0;
  /** Deletes waiting to be tried again. */
  private retrying = 0;
  private idle: Array<() => void> = [];

  constructor(store: ClaimStore) {
    this.store = store;
  }

  /** Deletes the claim unless a newer one has replaced it by the time its turn comes. */
  add(claim: ReleasedClaim): void {
    this.queue.push({ key: claim.key, revision: claim.revision, conn: claim.conn, attempt: 0 });
    this.next();
  }

  /** Claims waiting or being deleted. */
  get pending(): number {
    return this.queue.length - this.head + this.inFlight + this.retrying;
  }

  /** Resolves once every claim released so far is deleted (or found replaced). */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private next(): void {
    while (this.inFlight < DELETES_IN_FLIGHT && this.head < this.queue.length) {
      const claim = this.queue[this.head++]!;
      this.inFlight++;
      void this.attempt(claim).then(
        () => this.done(),
        () => {
          // Not answered (a timeout, a reconnect): tried again while the key still names the stream.
          if (++claim.attempt < ATTEMPTS) {
            this.retrying++;
            setTimeout(() => {
              this.retrying--;
              this.queue.push(claim);
              this.next();
            }, RETRY_MS * claim.attempt).unref();
          }
          this.done();
        },
      );
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      // Compact now and then rather than shifting on every claim.
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.pending === 0) {
      const waiting = this.idle;
      this.idle = [];
      for (const resolve of waiting) resolve();
    }
  }

  /** Deletes at the known revision; refused, the key is read: still ours (at a revision whose answer was lost), it is deleted there. */
  private async attempt(claim: Queued): Promise<void> {
    if (claim.attempt === 0) {
      try {
        return await this.store.remove(claim.key, claim.revision);
      } catch {
        // Replaced (what we want), or not answered: the key says which.
      }
    }
    const now = await this.store.get(claim.key);
    if (now?.claim?.conn !== claim.conn) return;
    claim.revision = now.revision;
    await this.store.remove(claim.key, now.revision);
  }

  private done(): void {
    this.inFlight--;
    this.next();
  }
}
