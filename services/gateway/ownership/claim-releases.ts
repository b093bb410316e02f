// Deleting the claims of ended streams, a few at a time (paced-queue.ts says why: the opens' claims
// go first). A delete is sent at the revision the stream last wrote; refused (a newer claim took the
// key: the client came back, here or on another gateway; or the stream's own last write landed at a
// revision whose answer was lost) the key is read, and deleted only if it still names the stream.

import type { ClaimStore } from './claim-store.js';
import { PacedQueue } from '../../core/paced-queue.js';
import { systemTimers, type Timers } from '../../core/timers.js';
import { IN_FLIGHT } from './in-flight.js';

/** A claim to delete: its key, the revision it was written at, and the stream that held it. */
export interface ReleasedClaim {
  readonly key: string;
  readonly revision: number;
  readonly conn: string;
}

/** A delete that failed while the claim is still ours (a timeout, a reconnect) is tried again. */
const ATTEMPTS = 5;
const RETRY_MS = 1000;

/** A delete waiting for its turn, or tried again: the revision it is sent at, and how often it was tried. */
interface PendingDelete {
  readonly key: string;
  revision: number;
  readonly conn: string;
  attempt: number;
}

export class ClaimReleases {
  private readonly store: ClaimStore;
  /** Copies of what to delete, never the stream: a closed stream is not kept alive by its delete. */
  private readonly deletes: PacedQueue<PendingDelete>;

  constructor(store: ClaimStore, timers: Timers = systemTimers) {
    this.store = store;
    this.deletes = new PacedQueue(
      IN_FLIGHT.claimDeletes,
      (claim) =>
        this.attempt(claim).catch(() => {
          // Not answered (a timeout, a reconnect): tried again while the key still names the stream.
          if (++claim.attempt < ATTEMPTS) this.deletes.retryLater(claim, RETRY_MS * claim.attempt);
        }),
      timers,
    );
  }

  /** Deletes the claim unless a newer one has replaced it by the time its turn comes. */
  add(claim: ReleasedClaim): void {
    this.deletes.add({ key: claim.key, revision: claim.revision, conn: claim.conn, attempt: 0 });
  }

  /** Resolves once every claim released so far is deleted (or found replaced). */
  settled(): Promise<void> {
    return this.deletes.settled();
  }

  /** Deletes at the known revision; refused, the key is read: still ours (at a revision whose answer was lost), it is deleted there. */
  private async attempt(claim: PendingDelete): Promise<void> {
    const freed = { by: 'release', conn: claim.conn } as const;
    if (claim.attempt === 0) {
      try {
        await this.store.remove(claim.key, claim.revision, freed);
        return;
      } catch {
        // Replaced (what we want), or not answered: the key says which.
      }
    }
    const now = await this.store.get(claim.key);
    if (now?.claim?.conn !== claim.conn) return;
    claim.revision = now.revision;
    await this.store.remove(claim.key, now.revision, freed);
  }
}
