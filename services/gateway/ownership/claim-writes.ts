// An open's claim write: read the key, write the claim at that revision (compare-and-set), and tell
// the node whose claim it replaced (a notice: claim-notices.ts). Someone writing the key between the
// read and the write makes the write fail: the key is read again and the newer claim replaced in
// turn, each round lost only to a newer write. A write whose answer never came may have landed all
// the same: the key is read once it would have, and the claim taken back if it names the stream.

import type { StreamClaim } from '../../../schemas/records.js';
import type { ClaimNotices } from './claim-notices.js';
import { isSoloKey } from './claim-keys.js';
import type { ReleasedClaim } from './claim-releases.js';
import { RevisionConflict } from '../../core/jetstream-errors.js';
import type { ClaimStore } from './claim-store.js';
import type { Timers } from '../../core/timers.js';

/** Compare-and-set rounds lost in a row before an open gives up. */
const WRITE_ATTEMPTS = 5;
/** How long after a claim write without an answer the key is read to see whether it landed. */
const LOST_WRITE_CHECK_MS = 5000;

/** Writes `record` over whatever `key` holds; resolves to the revision written, rejects when it could not. */
export async function writeOver(store: ClaimStore, notices: ClaimNotices, key: string, record: StreamClaim): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    // A stream's own key (no channel) is new: nothing to read.
    const now = isSoloKey(key) ? null : await store.get(key);
    try {
      const revision = await store.write(key, record, now?.revision ?? 0);
      const replaced = now?.claim;
      if (replaced != null && replaced.conn !== record.conn) notices.tell(replaced.node, { kind: 'replaced', key, conn: replaced.conn, revision });
      return revision;
    } catch (err) {
      if (!(err instanceof RevisionConflict) || attempt >= WRITE_ATTEMPTS) throw err;
    }
  }
}

/** After a write of `conn`'s claim whose answer was lost: the claim, if it landed, goes to `release` (deleted). */
export function takeBackIfLanded(store: ClaimStore, timers: Timers, key: string, conn: string, release: (claim: ReleasedClaim) => void): void {
  timers.after(LOST_WRITE_CHECK_MS, () => {
    void store.get(key).then(
      (now) => {
        if (now?.claim?.conn === conn) release({ key, revision: now.revision, conn });
      },
      () => undefined,
    );
  });
}
