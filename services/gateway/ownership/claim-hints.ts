// What tells a gateway, without a copy of the bucket, that one of its claims may have changed hands:
//  - a notice on the node's own subject, sent by the node that changed the claim and read its holder
//    from the key first: an open whose compare-and-set replaced it (the eviction's path: believed
//    without a read, as only a write the bucket accepted is followed by one), or a sweep that
//    deleted it, taking the node for dead (read before acting: the claim is written back unless
//    another stream claimed the key since);
//  - a core subscription per account this node holds streams for, `$KV.relay-streams.<account>.>`:
//    KV writes are ordinary publishes, so it hears every later write and delete of that account's
//    keys (a claim swept from under a live stream, or the write behind a notice that was lost). A
//    subscriber also hears writes the server refused, and hears them before they are stored: the
//    rules read the key before acting on one (claim-rules.ts, claim-checks.ts).
// A gateway thus hears the claim traffic of its own accounts, not the mesh's.

import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import type { Counter } from 'prom-client';
import { kvOperation, kvSubject } from '../../core/kv-internals.js';
import { BUCKET_STREAMS, CLAIM_NOTICE_PREFIX } from '../../core/subjects.js';
import { accountClaimKeys } from './claim-keys.js';

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

/** What the ownership rules are told, and how they tell others. */
export interface ClaimHints {
  /** Hears this node's notices, and from then on the accounts it watches, on behalf of `listener`. */
  listen(listener: HintListener): void;
  /** Hears the account's keys until `unwatchAccount` is called as often (one subscription per account). */
  watchAccount(account: string): void;
  unwatchAccount(account: string): void;
  tell(node: string, notice: ClaimNotice): void;
  /** Stops hearing anything. */
  close(): void;
}

export interface HintListener {
  /**
   * A write or delete of `key` was heard: read it before believing anything. `writer` is the stream
   * the written claim names (null for a delete or a value that is not a claim): a node's own
   * renewals come back this way, and need no read.
   */
  hint(key: string, writer: string | null): void;
  /** A node that replaced or swept `notice.conn`'s claim says so (claim-rules.ts says what each means). */
  noticed(notice: ClaimNotice): void;
}

export class NatsClaimHints implements ClaimHints {
  private readonly nc: NatsConnection;
  private readonly nodeId: string;
  private readonly received: Counter;
  private listener: HintListener | undefined;
  private readonly accounts = new Map<string, { sub: Subscription; holders: number }>();
  private readonly prefix = kvSubject(BUCKET_STREAMS, '');
  private notices: Subscription | undefined;

  constructor(nc: NatsConnection, nodeId: string, received: Counter) {
    this.nc = nc;
    this.nodeId = nodeId;
    this.received = received;
  }

  listen(listener: HintListener): void {
    this.listener = listener;
    this.notices = this.nc.subscribe(CLAIM_NOTICE_PREFIX + this.nodeId, {
      callback: (err, msg) => {
        if (err !== null) return;
        this.received.inc();
        const n = parseNotice(msg.string());
        if (n !== null) listener.noticed(n);
      },
    });
  }

  watchAccount(account: string): void {
    let w = this.accounts.get(account);
    if (w === undefined) {
      // Subscribed before the claim is written (same connection, so the server sees the SUB first).
      const sub = this.nc.subscribe(kvSubject(BUCKET_STREAMS, accountClaimKeys(account)), {
        callback: (err, msg) => {
          if (err !== null) return;
          this.received.inc();
          this.listener?.hint(msg.subject.slice(this.prefix.length), writerOf(msg));
        },
      });
      w = { sub, holders: 0 };
      this.accounts.set(account, w);
    }
    w.holders++;
  }

  unwatchAccount(account: string): void {
    const w = this.accounts.get(account);
    if (w === undefined || --w.holders > 0) return;
    w.sub.unsubscribe();
    this.accounts.delete(account);
  }

  tell(node: string, notice: ClaimNotice): void {
    this.nc.publish(CLAIM_NOTICE_PREFIX + node, encodeNotice(notice));
  }

  close(): void {
    this.notices?.unsubscribe();
    this.notices = undefined;
    for (const w of this.accounts.values()) w.sub.unsubscribe();
    this.accounts.clear();
  }
}

/** The stream a heard claim write names; null for a delete marker or anything else. */
function writerOf(msg: Msg): string | null {
  if (kvOperation(msg.headers) !== 'PUT') return null;
  try {
    const v = msg.json<{ conn?: unknown }>();
    return typeof v === 'object' && v !== null && typeof v.conn === 'string' ? v.conn : null;
  } catch {
    return null;
  }
}

/**
 * A replacement goes as earlier versions sent it, `{key, conn, revision}`. A sweep names its
 * revision `swept` instead: an earlier version, which reads only `revision`, ignores it (and hears
 * the sweep on its account subscription) rather than take it for an eviction.
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
