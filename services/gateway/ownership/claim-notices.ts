// How a gateway hears, without a copy of the bucket or a subscription to it, that one of its claims
// changed hands: whoever changes another node's claim has read that node from the key, and tells it
// on its own subject, `relay.claim-notice.<node>`, once the bucket has stored the change:
//  - an open whose compare-and-set replaced the claim (claim-writes.ts): an eviction, believed
//    without a read;
//  - a sweep that deleted it, taking the node for dead (claim-index.ts): read, and the claim written
//    back unless another stream claimed the key since.
// No one else changes another node's claim: a release deletes only its own stream's claim, a write
// back only a key found free. What no notice reports (a lost notice, a key written or deleted by
// hand) is found by the claim's renewal or a re-read after a silence: claim-rules.ts says which and
// when. One subscription per gateway, whatever the number of its streams or accounts.

import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { Counter } from 'prom-client';
import { guarded, loggedThrows } from '../../core/guarded-callback.js';
import type { Logger } from '../../core/logger.js';
import { CLAIM_NOTICE_PREFIX } from '../../core/subjects.js';

/**
 * What one node tells another of a claim of the other's stream `conn` on `key`: `replaced`, another
 * stream's claim was written over it at `revision`; `swept`, a sweep deleted it, leaving its marker
 * at `revision`.
 */
export interface ClaimNotice {
  readonly kind: 'replaced' | 'swept';
  readonly key: string;
  readonly conn: string;
  readonly revision: number;
}

/** How the ownership rules hear of their claims, and tell others of theirs. */
export interface ClaimNotices {
  /** Hears this node's notices from now on, on behalf of `listener`. */
  listen(listener: NoticeListener): void;
  tell(node: string, notice: ClaimNotice): void;
  /** Stops hearing anything. */
  close(): void;
}

export interface NoticeListener {
  /** A node that replaced or swept `notice.conn`'s claim says so (claim-rules.ts says what each means). */
  noticed(notice: ClaimNotice): void;
}

export class NatsClaimNotices implements ClaimNotices {
  private readonly nc: NatsConnection;
  private readonly nodeId: string;
  private readonly received: Counter;
  private readonly logger: Pick<Logger, 'warn'>;
  private sub: Subscription | undefined;

  constructor(nc: NatsConnection, nodeId: string, received: Counter, logger: Pick<Logger, 'warn'>) {
    this.nc = nc;
    this.nodeId = nodeId;
    this.received = received;
    this.logger = logger;
  }

  listen(listener: NoticeListener): void {
    this.sub = this.nc.subscribe(CLAIM_NOTICE_PREFIX + this.nodeId, {
      callback: guarded((err, msg) => {
        if (err !== null) return;
        this.received.inc();
        const n = parseNotice(msg.string());
        if (n !== null) listener.noticed(n);
      }, loggedThrows(this.logger, 'hearing a claim notice')),
    });
  }

  tell(node: string, notice: ClaimNotice): void {
    try {
      this.nc.publish(CLAIM_NOTICE_PREFIX + node, encodeNotice(notice));
    } catch {
      // The connection is closed (this node is stopping): as a notice lost, the holder's renewal finds the change.
    }
  }

  close(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
  }
}

/**
 * A replacement goes as earlier versions sent it, `{key, conn, revision}`. A sweep names its
 * revision `swept` instead: an earlier version, which reads only `revision`, ignores it (and hears
 * the sweep on the per-account subscription it still has) rather than take it for an eviction.
 */
function encodeNotice(n: ClaimNotice): string {
  const { key, conn, revision } = n;
  return JSON.stringify(n.kind === 'replaced' ? { key, conn, revision } : { key, conn, swept: revision });
}

function parseNotice(text: string): ClaimNotice | null {
  try {
    const v = JSON.parse(text) as { key?: unknown; conn?: unknown; revision?: unknown; swept?: unknown };
    if (typeof v.key !== 'string' || typeof v.conn !== 'string') return null;
    if (typeof v.revision === 'number') return { kind: 'replaced', key: v.key, conn: v.conn, revision: v.revision };
    if (typeof v.swept === 'number') return { kind: 'swept', key: v.key, conn: v.conn, revision: v.swept };
  } catch {
    // Not ours: ignored.
  }
  return null;
}
