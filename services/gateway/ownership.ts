// One stream per (account, channel) across the mesh (spec 4.1 rule 4). Opening a stream writes its
// claim to KV relay-streams by compare-and-set: the node reads the key, writes at that revision, and
// so learns whom it replaced; it tells that node directly (claim-hints.ts) and the replaced stream
// closes. KV orders the writes, so for two opens a millisecond apart on two nodes one write fails,
// is retried against the winner, and replaces it: exactly one survivor, the later claim.
//
// No node keeps a copy of the bucket. Each holds its own claims, renews them (claim-renewals.ts),
// deletes them when its streams end (claim-releases.ts), and hears only the writes to the keys of
// the accounts it holds streams for. The eviction reads one way: a hint or notice -> this file reads
// the key (claim-checks.ts) -> `evict(stream id)` -> the gateway closes the stream -> its end comes
// back as `release`.
//
// A lost notice is made up for by the account's subscription and, at the latest, by the renewal;
// after a time this node could not hear at all, verify() reads every claim's key at once.
// A claim deleted behind a live stream's back (a sweep that took this node for dead) is rewritten.

import { ClaimChecks } from './claim-checks.js';
import { claimRecord, streamClaimKey, type ClaimedStream } from './claim-keys.js';
import type { ClaimHints, ClaimNotice, HintListener } from './claim-hints.js';
import type { ClaimNotes } from './claim-index.js';
import { ClaimReleases } from './claim-releases.js';
import { RenewalSchedule } from './claim-renewals.js';
import { isConflict, type ClaimStore } from './claim-store.js';
import { IndexMap } from './index-map.js';

/** How long after a claim write without an answer the key is read to see whether it landed. */
const LOST_WRITE_CHECK_MS = 5000;
export { claimKey, streamClaimKey, streamOwner, type ClaimedStream } from './claim-keys.js';
/** Compare-and-set rounds lost in a row before an open gives up (each loses only to a newer write). */
const WRITE_ATTEMPTS = 5;

interface LocalClaim {
  readonly stream: ClaimedStream;
  readonly key: string;
  /** The revision our claim was written at; 0 while the write is in flight. */
  revision: number;
  /** The newest revision another connection wrote while ours was in flight. */
  foreignRevision: number;
  /** Another connection's claim replaced ours: nothing to renew or delete any more. */
  lost: boolean;
  /** The account whose keys are heard for this claim, until it is forgotten; null: none. */
  watched: string | null;
}

export interface OwnershipOptions {
  store: ClaimStore;
  hints: ClaimHints;
  nodeId: string;
  /** Another connection holds this local stream's key: the stream is to close. */
  evict: (streamId: string) => void;
  /** The crash index (claim-index.ts): told of each key before it is claimed or renewed. */
  index?: ClaimNotes;
}

const NO_NOTES: ClaimNotes = { claiming: () => Promise.resolve(), renewing: () => undefined };

export class Ownership implements HintListener {
  private readonly store: ClaimStore;
  private readonly hints: ClaimHints;
  private readonly nodeId: string;
  private readonly evict: (streamId: string) => void;
  private readonly index: ClaimNotes;
  /** This node's claims, by stream id and by key (a hint names a key). */
  private readonly claims = new Map<string, LocalClaim>();
  private readonly byKey = new IndexMap<LocalClaim>();
  private readonly releases: ClaimReleases;
  readonly renewals: RenewalSchedule<LocalClaim>;
  /** Reads of a claim's key after a hint, one at a time per claim. */
  private readonly checks = new ClaimChecks<LocalClaim>((c) => this.settle(c));

  constructor(options: OwnershipOptions) {
    this.store = options.store;
    this.hints = options.hints;
    this.nodeId = options.nodeId;
    this.evict = options.evict;
    this.index = options.index ?? NO_NOTES;
    this.releases = new ClaimReleases(this.store);
    this.renewals = new RenewalSchedule((c) => this.renew(c));
  }

  start(claimTtlMs: number): void {
    this.renewals.start(claimTtlMs / 2);
  }

  /** Whether the stream's claim is held (written or being written) and not lost. */
  holds(streamId: string): boolean {
    const c = this.claims.get(streamId);
    return c !== undefined && !c.lost;
  }

  /**
   * Writes the stream's claim; rejects when the write fails. A stream released while its claim was
   * being written (the client left) has the claim taken back as soon as it lands.
   */
  async claim(stream: ClaimedStream): Promise<void> {
    const key = streamClaimKey(stream);
    const watched = stream.channel !== null ? stream.account : null;
    if (watched !== null) this.hints.watchAccount(watched);
    const c: LocalClaim = { stream, key, revision: 0, foreignRevision: 0, lost: false, watched };
    this.claims.set(stream.id, c);
    this.byKey.add(key, c);
    let revision: number;
    try {
      await this.index.claiming(key);
      // Released while its key was being noted (the client left): nothing written, nothing to take back.
      if (this.claims.get(stream.id) !== c) return;
      revision = await this.write(c);
    } catch (err) {
      if (!isConflict(err)) this.checkLostWrite(c);
      this.forget(c);
      throw err;
    }
    if (this.claims.get(stream.id) !== c) return this.releases.add({ key, revision, conn: stream.id });
    c.revision = revision;
    this.renewals.add(c);
    if (c.foreignRevision > revision) this.lose(c);
  }

  /** Reads the key and writes over whatever it holds at that revision; tells the node it replaced. */
  private async write(c: LocalClaim): Promise<number> {
    const record = claimRecord(this.nodeId, c.stream);
    for (let attempt = 1; ; attempt++) {
      // A stream's own key (no channel) is new: nothing to read.
      const now = c.key.startsWith('solo.') ? null : await this.store.get(c.key);
      try {
        const revision = await this.store.write(c.key, record, now?.revision ?? 0);
        const replaced = now?.claim;
        if (replaced != null && replaced.conn !== c.stream.id) this.hints.tell(replaced.node, { key: c.key, conn: replaced.conn, revision });
        return revision;
      } catch (err) {
        // Someone wrote the key between our read and our write: read again, and replace them.
        if (!isConflict(err) || attempt >= WRITE_ATTEMPTS) throw err;
      }
    }
  }

  /** A write whose answer was lost may have been applied: once it would have landed, it is taken back if it names the stream. */
  private checkLostWrite(c: LocalClaim): void {
    setTimeout(() => {
      void this.store.get(c.key).then(
        (now) => {
          if (now?.claim?.conn === c.stream.id) this.releases.add({ key: c.key, revision: now.revision, conn: c.stream.id });
        },
        () => undefined,
      );
    }, LOST_WRITE_CHECK_MS).unref();
  }

  /** A node whose write replaced one of ours says so. */
  noticed(n: ClaimNotice): void {
    const c = this.claims.get(n.conn);
    if (c === undefined || c.key !== n.key) return;
    // Ours is still being written: whichever revision is later decides, once ours is known.
    if (c.revision === 0) c.foreignRevision = Math.max(c.foreignRevision, n.revision);
    else if (n.revision > c.revision) this.lose(c);
  }

  /** A write or delete of the key was seen: each of our claims on it, unless the write was its own, is checked against the bucket. */
  hint(key: string, writer: string | null): void {
    for (const c of this.byKey.get(key)) if (c.revision !== 0 && !c.lost && c.stream.id !== writer) void this.checks.check(c, { recheck: true });
  }

  /**
   * Brings our claim in line with the key: replaced -> lost; gone -> written again; ours -> its
   * revision. True when the key still held our claim at the revision we knew (nothing to do).
   */
  private async settle(c: LocalClaim): Promise<boolean> {
    if (!this.live(c)) return false;
    const now = await this.store.get(c.key, true);
    if (!this.live(c)) return false;
    if (now?.claim?.conn === c.stream.id) {
      // Our own write, perhaps one whose answer was lost: later renewals and the delete name it.
      const known = now.revision <= c.revision;
      c.revision = Math.max(c.revision, now.revision);
      return known;
    }
    if (now !== null && now.claim !== null) {
      if (now.revision > c.revision) this.lose(c);
      return false;
    }
    // Deleted by another node (a sweep that took this node for dead) or aged out: the stream is
    // alive, so the claim is written again unless someone claims the key first.
    try {
      // Noted again: a sweep that deleted the claim also cleared this node's index.
      await this.index.claiming(c.key);
      const revision = await this.store.write(c.key, claimRecord(this.nodeId, c.stream), now?.revision ?? 0);
      if (this.claims.get(c.stream.id) === c) c.revision = revision;
      else this.releases.add({ key: c.key, revision, conn: c.stream.id });
    } catch (err) {
      if (isConflict(err)) return this.settle(c);
    }
    return false;
  }

  private live(c: LocalClaim): boolean {
    return !c.lost && this.claims.get(c.stream.id) === c;
  }

  private lose(c: LocalClaim): void {
    if (c.lost) return;
    c.lost = true;
    this.renewals.delete(c);
    this.evict(c.stream.id);
  }

  /** Checks every live claim as after a hint: for when this node could not hear (notices lost or queued). */
  verify(): Promise<void> {
    return this.checks.checkAll([...this.claims.values()].filter((c) => c.revision !== 0 && this.live(c)));
  }

  /** Rewrites a live claim at its revision; true once written (or nothing is due), false if not. */
  private async renew(c: LocalClaim): Promise<boolean> {
    if (c.revision === 0 || !this.live(c)) return true;
    this.index.renewing(c.key);
    try {
      const revision = await this.store.write(c.key, claimRecord(this.nodeId, c.stream), c.revision);
      // Released while the renewal was in flight: its delete named the old revision.
      if (this.claims.get(c.stream.id) === c) c.revision = Math.max(c.revision, revision);
      else this.releases.add({ key: c.key, revision, conn: c.stream.id });
      return true;
    } catch (err) {
      // Not at our revision any more: replaced (a notice that never came), deleted, or ours at a
      // revision whose answer was lost. The key says which.
      if (isConflict(err)) await this.checks.check(c, { recheck: false });
      return false;
    }
  }

  /** Forgets an ended stream's claim and deletes it from the bucket unless another has replaced it. */
  release(streamId: string): void {
    const c = this.claims.get(streamId);
    if (c === undefined) return;
    this.forget(c);
    // Still being written: `claim` takes it back when the write lands.
    if (c.revision === 0 || c.lost) return;
    this.releases.add({ key: c.key, revision: c.revision, conn: c.stream.id });
  }

  private forget(c: LocalClaim): void {
    if (this.claims.get(c.stream.id) !== c) return;
    this.claims.delete(c.stream.id);
    this.byKey.delete(c.key, c);
    this.renewals.delete(c);
    if (c.watched !== null) this.hints.unwatchAccount(c.watched);
    c.watched = null;
  }

  /** Resolves once the claims released so far are deleted (or found replaced). */
  settled(): Promise<void> {
    return this.releases.settled();
  }

  stop(): void {
    this.renewals.stop();
  }
}
