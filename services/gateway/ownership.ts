// One stream per (account, channel) across the mesh (spec 4.1 rule 4). Opening a stream writes its
// claim to KV relay-streams; every gateway mirrors the bucket and closes its local stream when the
// key names another connection at a later revision. Last writer wins, and since KV orders writes
// every node agrees on the survivor, even for opens a millisecond apart on two nodes.
//
// Stale claims never block anyone (a new open simply overwrites). They are removed when their stream
// closes (only if still ours), by the bucket's max age, and by a sweep (stale-claims.ts).
//
// Every other stream (a bridge's, or one opened without a channel) has a claim of its own too, under
// a key no other stream shares: the bucket is then the mesh-wide list of open streams, which is what
// the per-account and per-key stream caps count.
//
// The claims of this node's streams are kept here, by stream id, and nowhere else. When another
// connection wins a key, the stream's id is handed to `onEvict`; the stream's end comes back as
// `release`, whoever ended it.

import type { KV } from '@nats-io/kv';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { StreamClaim } from '../../schemas/records.js';
import { channelToken } from '../core/channel.js';
import { encodeRecord, KvMirror } from '../core/kv-mirror.js';
import type { Logger } from '../core/logger.js';
import { parseStreamClaim } from '../core/records.js';
import { BUCKET_STREAMS } from '../core/subjects.js';
import { ClaimReleases, type ReleasedClaim } from './claim-releases.js';
import { IndexMap } from './index-map.js';
import type { NodeLiveness } from '../core/node-liveness.js';
import { StaleClaims } from './stale-claims.js';

/** How long after a claim write without an answer the mirror is asked whether it landed. */
const LOST_WRITE_CHECK_MS = 5000;
/** Claim renewals in flight at once per gateway. */
const RENEWALS_IN_FLIGHT = 64;
/**
 * The renewal period is cut in ticks of a second and each claim is renewed at its own tick: a steady
 * trickle of writes rather than every claim at once, which at 100,000 claims held up the writes of
 * evictions behind it (docs/BENCHMARKS.md, scale, ownership).
 */
const RENEWAL_TICK_MS = 1000;

export function claimKey(account: string, channel: string): string {
  return `${account}.${channelToken(channel)}`;
}

/** What a claim says of the stream behind it. */
export interface ClaimedStream {
  readonly id: string;
  readonly account: string | null;
  readonly clientId: string;
  readonly channel: string | null;
  readonly agent?: string | null;
  /** Epoch ms. */
  readonly openedAt: number;
}

/** The claim key of a stream: shared by every stream of one (account, channel), else its own. */
export function streamClaimKey(s: Pick<ClaimedStream, 'account' | 'channel' | 'id'>): string {
  return s.account !== null && s.channel !== null ? claimKey(s.account, s.channel) : `solo.${s.id}`;
}

/** Whom a stream counts against: its account, or for a stream without a session its key. */
export function streamOwner(s: Pick<ClaimedStream, 'account' | 'clientId'>): string {
  return s.account ?? `key:${s.clientId}`;
}

/** The claim of one of this node's streams. */
interface LocalClaim {
  readonly stream: ClaimedStream;
  readonly key: string;
  /** The revision our claim was written at; 0 while the write is in flight. */
  revision: number;
  /** When it was last written (ms): renewals that fall behind show as its age. */
  writtenAt: number;
  /** The tick of the renewal period at which it is renewed. */
  readonly slice: number;
  /** The newest revision another connection wrote while ours was in flight. */
  foreignRevision: number;
}

/** What a gateway keeps of each claim in the mesh: who holds it, and whom it counts against. */
interface Holder {
  node: string;
  conn: string;
  owner: string;
  /** When this node last saw the claim written (ms): live claims are rewritten every CLAIM_TTL/2. */
  seenAt: number;
}

export class Ownership {
  readonly mirror: KvMirror<Holder>;
  private readonly kv: KV;
  private readonly nodeId: string;
  private readonly stale: StaleClaims<Holder>;
  private readonly onEvict: (streamId: string) => void;
  /** This node's claims, by stream id, and by claim key (which another node's claim names). */
  private readonly claims = new Map<string, LocalClaim>();
  private readonly byKey = new IndexMap<LocalClaim>();
  /** Deletes of released claims, paced (a drain waits for them). */
  private readonly releases: ClaimReleases;
  /** Claims held by other nodes, per owner (this node's own streams are counted by the gateway). */
  private readonly remoteCounts = new Map<string, number>();
  /** Claims in the mirror per holding node, this one included. */
  private readonly claimsByNode = new Map<string, number>();
  /** Node ids repeat across every claim of a node: one string each. */
  private readonly nodeNames = new Map<string, string>();
  /** Claims being written again after another node deleted them. */
  private readonly reclaiming = new Set<LocalClaim>();
  /** Claims due for renewal, in the order they fell due, RENEWALS_IN_FLIGHT renewed at a time. */
  private readonly renewals = new Set<LocalClaim>();
  private renewing = 0;
  private renewalTick = 0;
  /** Ticks in a renewal period (CLAIM_TTL/2). */
  private renewalSlices = 1;
  private refreshTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: {
    js: JetStreamClient;
    kv: KV;
    nodeId: string;
    logger: Logger;
    liveness: NodeLiveness;
    /** Another connection won the key of this local stream: it is to close. */
    onEvict: (streamId: string) => void;
  }) {
    this.kv = options.kv;
    this.nodeId = options.nodeId;
    this.onEvict = options.onEvict;
    this.mirror = new KvMirror(options.js, BUCKET_STREAMS, (v) => this.holder(v), options.logger);
    this.releases = new ClaimReleases(this.kv, (c, retry) => this.revisionToDelete(c, retry));
    this.stale = new StaleClaims({
      kv: this.kv,
      mirror: this.mirror,
      nodeId: this.nodeId,
      liveness: options.liveness,
      logger: options.logger,
      holders: () => this.claimsByNode.keys(),
    });
    this.mirror.on('put', (key, claim, revision, previous) => {
      this.count(previous, -1);
      this.count(claim, 1);
      this.onClaim(key, claim, revision);
    });
    this.mirror.on('delete', (key, previous, revision) => {
      this.count(previous, -1);
      this.onDeleted(key, revision);
    });
  }

  private count(holder: Holder | undefined, delta: number): void {
    if (holder === undefined) return;
    const held = (this.claimsByNode.get(holder.node) ?? 0) + delta;
    if (held > 0) this.claimsByNode.set(holder.node, held);
    else this.claimsByNode.delete(holder.node);
    if (holder.node === this.nodeId) return;
    const n = (this.remoteCounts.get(holder.owner) ?? 0) + delta;
    if (n > 0) this.remoteCounts.set(holder.owner, n);
    else this.remoteCounts.delete(holder.owner);
  }

  /** Streams other nodes hold for this owner, as this node's mirror sees them. */
  remoteStreams(owner: string): number {
    return this.remoteCounts.get(owner) ?? 0;
  }

  /** Whether another node holds this claim key (a new stream on it would evict that one). */
  heldElsewhere(key: string): boolean {
    const holder = this.mirror.get(key);
    return holder !== undefined && holder.node !== this.nodeId;
  }

  /** Sweeps for claims of dead nodes every `sweepEveryMs` (the node timeout). */
  async start(claimTtlMs: number, sweepEveryMs: number): Promise<void> {
    await this.mirror.start();
    await this.stale.dropOwn();
    this.renewalSlices = Math.max(1, Math.floor(claimTtlMs / 2 / RENEWAL_TICK_MS));
    this.refreshTimer = setInterval(() => this.refresh(), RENEWAL_TICK_MS).unref();
    this.sweepTimer = setInterval(() => void this.stale.sweep(claimTtlMs), sweepEveryMs).unref();
  }

  private holder(value: unknown): Holder | null {
    const claim = parseStreamClaim(value);
    if (claim === null) return null;
    let node = this.nodeNames.get(claim.node);
    if (node === undefined) this.nodeNames.set(claim.node, (node = claim.node));
    return { node, conn: claim.conn, owner: streamOwner({ account: claim.uuid, clientId: claim.clientId }), seenAt: Date.now() };
  }

  /** Where a released claim stands now: see ClaimReleases. */
  private revisionToDelete(c: ReleasedClaim, retry: boolean): number | null {
    const holder = this.mirror.get(c.key);
    const revision = this.mirror.revision(c.key) ?? 0;
    // Gone already, or (first try) our write not mirrored yet.
    if (holder === undefined) return retry ? null : c.revision;
    // Ours, perhaps at a later revision than we knew (a write applied whose answer was lost).
    if (holder.conn === c.conn) return Math.max(revision, c.revision);
    return revision > c.revision ? null : c.revision;
  }

  private onClaim(key: string, claim: Holder, revision: number): void {
    for (const c of this.byKey.get(key)) {
      if (c.stream.id === claim.conn) {
        // Our own write coming back: a renewal whose answer was lost (timed out, yet applied) tells
        // the claim its revision here, so later renewals and the delete name the right one.
        if (c.revision !== 0) c.revision = Math.max(c.revision, revision);
        continue;
      }
      // Ours is still being written: whichever revision is later decides, once ours is known.
      if (c.revision === 0) c.foreignRevision = Math.max(c.foreignRevision, revision);
      else if (revision > c.revision) this.onEvict(c.stream.id);
    }
  }

  /**
   * Another node deleted the claim of a stream still open here: a sweep that took this node for dead
   * (its heartbeat late behind a stall) or an aged-out record. The stream is alive, so the claim is
   * written again, unless someone claims the key first (then their claim evicts ours as usual).
   */
  private onDeleted(key: string, revision: number): void {
    for (const c of this.byKey.get(key)) {
      // (An older delete, of a claim this node released before, says nothing of ours.)
      if (c.revision !== 0 && revision > c.revision) void this.reclaim(c);
    }
  }

  private async reclaim(c: LocalClaim): Promise<void> {
    if (this.reclaiming.has(c)) return;
    this.reclaiming.add(c);
    try {
      const revision = await this.kv.create(c.key, encodeRecord(this.recordOf(c.stream)));
      c.writtenAt = Date.now();
      if (this.claims.get(c.stream.id) === c) c.revision = revision;
      else this.queueDelete(c, revision);
    } catch {
      // The key is held again (by whoever claimed it meanwhile): their claim reaches the mirror.
    } finally {
      this.reclaiming.delete(c);
    }
  }

  /**
   * Writes the stream's claim; rejects when the write fails. A later claim already seen meanwhile
   * evicts the stream through `onEvict`, like any other. A stream released while its claim was being
   * written (the client left) has the claim taken back as soon as it lands.
   */
  async claim(stream: ClaimedStream): Promise<void> {
    const claim: LocalClaim = { stream, key: streamClaimKey(stream), revision: 0, writtenAt: 0, foreignRevision: 0, slice: Math.floor(Math.random() * this.renewalSlices) };
    this.claims.set(stream.id, claim);
    this.byKey.add(claim.key, claim);
    try {
      claim.revision = await this.kv.put(claim.key, encodeRecord(this.recordOf(stream)));
      claim.writtenAt = Date.now();
    } catch (err) {
      // The write may have been applied although its answer was lost: once the mirror has caught
      // up, the claim is taken back if it names this stream (the stream is refused and closes).
      setTimeout(() => {
        const revision = this.mirror.revision(claim.key);
        if (revision !== undefined && this.mirror.get(claim.key)?.conn === stream.id) this.queueDelete(claim, revision);
      }, LOST_WRITE_CHECK_MS).unref();
      throw err;
    }
    if (this.claims.get(stream.id) !== claim) {
      this.queueDelete(claim);
      return;
    }
    if (claim.foreignRevision > claim.revision) this.onEvict(stream.id);
  }

  private recordOf(stream: ClaimedStream): StreamClaim {
    return {
      node: this.nodeId,
      conn: stream.id,
      uuid: stream.account,
      channel: stream.channel,
      clientId: stream.clientId,
      openedAt: new Date(stream.openedAt).toISOString(),
      ...(stream.agent != null ? { agent: stream.agent } : {}),
    };
  }

  /** Forgets an ended stream's claim and deletes it from the bucket if it is still the current one. */
  release(streamId: string): void {
    const claim = this.claims.get(streamId);
    if (claim === undefined) return;
    this.claims.delete(streamId);
    this.renewals.delete(claim);
    this.byKey.delete(claim.key, claim);
    // Still being written: `claim` takes it back when the write lands.
    if (claim.revision === 0) return;
    this.queueDelete(claim);
  }

  private queueDelete(c: LocalClaim, revision = c.revision): void {
    this.releases.add({ key: c.key, revision, conn: c.stream.id });
  }

  /** Resolves once the claims released so far are deleted (or found replaced). */
  settled(): Promise<void> {
    return this.releases.settled();
  }

  /**
   * Live claims are rewritten before the bucket's max age would drop them: each at its tick of the
   * period (every CLAIM_TTL/2, a tick a second), RENEWALS_IN_FLIGHT at a time. One after another, a
   * gateway of 16,000 streams on a replicated bucket took longer than the period (docs/BENCHMARKS.md,
   * scale --cluster).
   */
  private refresh(): void {
    const slice = this.renewalTick++ % this.renewalSlices;
    // Oldest first, each claim queued once: when NATS is slower than the ticks, the queue is what is
    // behind, not a growing list of repeats.
    for (const c of this.claims.values()) if (c.slice === slice) this.renewals.add(c);
    while (this.renewing < RENEWALS_IN_FLIGHT && this.renewals.size > 0) {
      this.renewing++;
      void this.renewDue().finally(() => this.renewing--);
    }
  }

  /**
   * How far (ms) the most overdue claim of this node is past its renewal (written more than a period
   * and a tick ago): 0 while renewals keep up. Claims not renewed before CLAIM_TTL age out of the bucket.
   */
  renewalOverdueMs(now = Date.now()): number {
    let oldest = now;
    for (const c of this.claims.values()) if (c.revision !== 0 && c.writtenAt < oldest) oldest = c.writtenAt;
    return Math.max(0, now - oldest - (this.renewalSlices + 1) * RENEWAL_TICK_MS);
  }

  private async renewDue(): Promise<void> {
    for (;;) {
      const c = this.renewals.values().next();
      if (c.done === true) return;
      this.renewals.delete(c.value);
      await this.renew(c.value);
    }
  }

  private async renew(c: LocalClaim): Promise<void> {
    // Released since the refresh began, or still being written: nothing to rewrite.
    if (c.revision === 0 || this.claims.get(c.stream.id) !== c) return;
    const holder = this.mirror.get(c.key);
    // Another connection holds the key: the mirror has evicted us, or is about to.
    if (holder !== undefined && holder.conn !== c.stream.id) return;
    try {
      const revision = await this.kv.update(c.key, encodeRecord(this.recordOf(c.stream)), c.revision);
      c.writtenAt = Date.now();
      // Released while the renewal was in flight: its delete named the old revision.
      if (this.claims.get(c.stream.id) === c) c.revision = revision;
      else this.queueDelete(c, revision);
    } catch {
      // Not at our revision any more: replaced (the mirror will say by whom and evict us), or gone
      // (aged out, or swept while this node was taken for dead), in which case it is written again.
      // Creating it fails in the first case, so trying costs nothing. A stream released meanwhile
      // has nothing to write back.
      if (this.claims.get(c.stream.id) === c) await this.reclaim(c);
    }
  }

  async stop(): Promise<void> {
    if (this.refreshTimer !== undefined) clearInterval(this.refreshTimer);
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    await this.mirror.stop();
  }
}
