// The claim rules: what this node believes of each claim it holds, and what it does about it. It
// holds its own claims, renews them (claim-renewals.ts) and deletes them when its streams end
// (claim-releases.ts). It does not listen to the bucket: whoever changes one of its claims tells it
// (claim-notices.ts), and what nobody tells, a read finds. How each change is found, and how soon:
//  - replaced by an open: the opener's notice, at once, acted on without a read (only a write the
//    bucket accepted is followed by one, naming the revision written: a notice newer than the
//    claim proves it replaced);
//  - swept by a gateway that took this node for dead: the sweeper's notice, at once; the key is
//    read (claim-checks.ts) and the claim written back unless another stream claimed it since;
//  - a notice lost or held up while this node could not hear (a reconnect, a stalled event loop, an
//    unwritten heartbeat): every claim is read again before the live feed goes on
//    (silence-recovery.ts, `verify`);
//  - anything else nobody tells of: a notice lost elsewhere (between servers, a sender that died
//    between its write and its notice), a key written or deleted by hand, a claim aged out: the
//    claim's renewal, refused at its stale revision, reads the key, within CLAIM_TTL/2 (a renewal
//    never passes a change: it writes at the revision we know). Until then an open elsewhere may
//    write over a key deleted by hand without a notice, and two streams live.
// A claim found replaced is lost: its stream is evicted once the step that found it is over
// (claim-losses.ts) -> the gateway closes the stream -> its end comes back as `release`.
// A key found free behind a live stream (what a read means: claimState in claim-store.ts) is written
// again unless another stream claimed it since.

import { ClaimChecks } from './claim-checks.js';
import { claimRecord, streamClaimKey, type ClaimedStream } from './claim-keys.js';
import type { ClaimNotice, ClaimNotices, NoticeListener } from './claim-notices.js';
import type { ClaimNotes } from './claim-index.js';
import { ClaimLosses } from './claim-losses.js';
import { ClaimReleases } from './claim-releases.js';
import { takeBackIfLanded, writeOver } from './claim-writes.js';
import { RenewalSchedule } from './claim-renewals.js';
import { RevisionConflict } from '../../core/jetstream-errors.js';
import { claimState, type ClaimStore } from './claim-store.js';
import { LocalClaims, type LocalClaim } from './local-claims.js';
import { systemTimers, type Timers } from '../../core/timers.js';

export interface ClaimRulesOptions {
  store: ClaimStore;
  notices: ClaimNotices;
  nodeId: string;
  /** Another connection holds this local stream's key: the stream is to close. */
  evict: (streamId: string) => void;
  /** The crash index (claim-index.ts): told of each key before it is claimed or renewed. */
  index?: ClaimNotes;
  timers?: Timers;
}

const NO_NOTES: ClaimNotes = { claiming: () => Promise.resolve(), renewing: () => undefined };

export class ClaimRules implements NoticeListener {
  private readonly store: ClaimStore;
  private readonly notices: ClaimNotices;
  private readonly nodeId: string;
  private readonly index: ClaimNotes;
  private readonly timers: Timers;
  private readonly claims = new LocalClaims();
  private readonly releases: ClaimReleases;
  private readonly schedule: RenewalSchedule<LocalClaim>;
  /** Reads of a claim's key, one at a time per claim. */
  private readonly checks: ClaimChecks<LocalClaim>;
  /** Lost claims whose streams are evicted once the current step is over (claim-losses.ts). */
  private readonly losses: ClaimLosses<LocalClaim>;

  constructor(options: ClaimRulesOptions) {
    this.store = options.store;
    this.notices = options.notices;
    this.nodeId = options.nodeId;
    // A claim forgotten before its turn (its stream ended meanwhile) has nothing to evict.
    this.losses = new ClaimLosses((c) => {
      if (this.claims.has(c)) options.evict(c.stream.id);
    });
    this.index = options.index ?? NO_NOTES;
    this.timers = options.timers ?? systemTimers;
    this.checks = new ClaimChecks((c) => this.reconcile(c));
    this.releases = new ClaimReleases(this.store, this.timers);
    this.schedule = new RenewalSchedule((c) => this.renew(c));
  }

  start(claimTtlMs: number): void {
    this.schedule.start(claimTtlMs / 2);
  }

  /** Runs one renewal tick now (the timer's work). */
  renewalTick(): Promise<void> {
    return this.schedule.onTick();
  }

  /** How far the least recently renewed claim is past its renewal (0 while on time). */
  renewalOverdueMs(): number {
    return this.schedule.overdueMs();
  }

  /** The rules' own tests run renewal ticks through this; everything else asks renewalTick(). */
  get renewals(): Pick<RenewalSchedule<LocalClaim>, 'onTick'> {
    return this.schedule;
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
    const c = this.claims.add(stream, key);
    let revision: number;
    try {
      await this.index.claiming(key);
      // Released while its key was being noted (the client left): nothing written, nothing to take back.
      if (!this.claims.has(c)) return;
      revision = await writeOver(this.store, this.notices, key, claimRecord(this.nodeId, stream));
    } catch (err) {
      if (!(err instanceof RevisionConflict)) takeBackIfLanded(this.store, this.timers, key, stream.id, (r) => this.releases.add(r));
      this.forget(c);
      throw err;
    }
    if (!this.claims.has(c)) return this.releases.add({ key, revision, conn: stream.id });
    c.revision = revision;
    this.schedule.add(c);
    // A notice came first: a newer claim replaced ours, or a sweep deleted it, before we heard our own answer.
    if (c.foreignRevision > revision) this.lose(c);
    else if (c.sweptRevision > revision) void this.checks.check(c);
  }

  /**
   * A node that replaced or swept one of our claims says so. A replacement is believed without a
   * read; a sweep's delete is followed by a read, and the claim written back unless another stream
   * claimed the key since (reconcile). A notice of a claim we no longer hold, or older than the
   * revision we know (we wrote since), says nothing new.
   */
  noticed(n: ClaimNotice): void {
    const c = this.claims.get(n.conn);
    if (c === undefined || c.key !== n.key || c.lost) return;
    // Ours is still being written: compared once its revision is known.
    if (c.revision === 0) {
      if (n.kind === 'replaced') c.foreignRevision = Math.max(c.foreignRevision, n.revision);
      else c.sweptRevision = Math.max(c.sweptRevision, n.revision);
      return;
    }
    if (n.revision <= c.revision) return;
    if (n.kind === 'replaced') this.lose(c);
    // Read from the leader: the sweep's delete was stored before its notice was sent.
    else void this.checks.check(c);
  }

  /**
   * Brings our claim in line with the key, read from the stream leader: ours -> its revision;
   * another claim, or a marker left by another stream's release or sweep, after ours -> lost; aged
   * out, or a marker of a sweep of this stream or of an earlier version -> written again.
   */
  private async reconcile(c: LocalClaim): Promise<void> {
    if (!this.live(c)) return;
    const now = await this.store.get(c.key, true);
    if (!this.live(c)) return;
    const state = claimState(now, c.stream.id);
    if (now !== null && state === 'ours') {
      // Our own write, perhaps one whose answer was lost: later renewals and the delete name it.
      c.revision = Math.max(c.revision, now.revision);
      return;
    }
    if (now !== null && state === 'replaced') {
      if (now.revision > c.revision) this.lose(c);
      return;
    }
    // Free: written again unless someone claims the key first.
    try {
      // Noted again: a sweep that deleted the claim also cleared this node's index.
      await this.index.claiming(c.key);
      const revision = await this.store.write(c.key, claimRecord(this.nodeId, c.stream), now?.revision ?? 0);
      if (!this.claims.has(c)) {
        this.releases.add({ key: c.key, revision, conn: c.stream.id });
      } else {
        c.revision = revision;
      }
    } catch (err) {
      // Someone claimed the key first: read again (and lose to them). Not answered: the renewal looks again.
      if (err instanceof RevisionConflict) return this.reconcile(c);
    }
  }

  private live(c: LocalClaim): boolean {
    return !c.lost && this.claims.has(c);
  }

  /** Marks the claim lost (nothing more to renew or delete) and queues its stream's eviction. */
  private lose(c: LocalClaim): void {
    if (c.lost) return;
    c.lost = true;
    this.schedule.delete(c);
    this.losses.add(c);
  }

  /** Reads every live claim's key: for when this node could not hear (notices lost or queued). */
  verify(): Promise<void> {
    return this.checks.checkAll(this.claims.all().filter((c) => c.revision !== 0 && this.live(c)));
  }

  /** Rewrites a live claim at its revision; true once written (or nothing is due), false if not. */
  private async renew(c: LocalClaim): Promise<boolean> {
    if (c.revision === 0 || !this.live(c)) return true;
    this.index.renewing(c.key);
    try {
      const revision = await this.store.write(c.key, claimRecord(this.nodeId, c.stream), c.revision);
      // Released while the renewal was in flight: its delete named the old revision.
      if (this.claims.has(c)) c.revision = Math.max(c.revision, revision);
      else this.releases.add({ key: c.key, revision, conn: c.stream.id });
      return true;
    } catch (err) {
      // Not at our revision any more: replaced (a notice that never came), deleted, or ours at a
      // revision whose answer was lost. The key says which.
      if (err instanceof RevisionConflict) await this.checks.check(c);
      return false;
    }
  }

  /** Forgets an ended stream's claim and deletes it from the bucket unless another has replaced it. */
  release(streamId: string): void {
    const c = this.claims.get(streamId);
    if (c === undefined) return;
    this.forget(c);
    // Still being written: `claim` takes it back when the write lands. Lost: the key is another's.
    if (c.revision === 0 || c.lost) return;
    this.releases.add({ key: c.key, revision: c.revision, conn: c.stream.id });
  }

  private forget(c: LocalClaim): void {
    if (!this.claims.forget(c)) return;
    this.schedule.delete(c);
  }

  /** Resolves once the claims released so far are deleted (or found replaced). */
  settled(): Promise<void> {
    return this.releases.settled();
  }

  stop(): void {
    this.schedule.stop();
  }
}
