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

import type { KV } from '@nats-io/kv';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { StreamClaim } from '../../schemas/records.js';
import { channelToken } from '../core/channel.js';
import { encodeRecord, KvMirror } from '../core/kv-mirror.js';
import type { Logger } from '../core/logger.js';
import { parseStreamClaim } from '../core/records.js';
import { BUCKET_STREAMS } from '../core/subjects.js';
import type { NodeLiveness } from './node-liveness.js';
import type { ClientStream } from './client-stream.js';
import { IndexMap } from './index-map.js';
import { StaleClaims } from './stale-claims.js';

export function claimKey(account: string, channel: string): string {
  return `${account}.${channelToken(channel)}`;
}

/** The claim key of a stream: shared by every stream of one (account, channel), else its own. */
export function streamClaimKey(s: Pick<ClientStream, 'account' | 'channel' | 'id'>): string {
  return s.account !== null && s.channel !== null ? claimKey(s.account, s.channel) : `solo.${s.id}`;
}

/** Whom a stream counts against: its account, or for a stream without a session its key. */
export function streamOwner(s: Pick<ClientStream, 'account' | 'clientId'>): string {
  return s.account ?? `key:${s.clientId}`;
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
  private readonly onEvict: (stream: ClientStream) => void;
  private readonly local = new IndexMap<ClientStream>();
  /** Claims held by other nodes, per owner (this node's own streams are counted by the gateway). */
  private readonly remoteCounts = new Map<string, number>();
  /** Node ids repeat across every claim of a node: one string each. */
  private readonly nodeNames = new Map<string, string>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: {
    js: JetStreamClient;
    kv: KV;
    nodeId: string;
    logger: Logger;
    liveness: NodeLiveness;
    onEvict: (stream: ClientStream) => void;
  }) {
    this.kv = options.kv;
    this.nodeId = options.nodeId;
    this.onEvict = options.onEvict;
    this.mirror = new KvMirror(options.js, BUCKET_STREAMS, (v) => this.holder(v), options.logger);
    this.stale = new StaleClaims({ kv: this.kv, mirror: this.mirror, nodeId: this.nodeId, liveness: options.liveness, logger: options.logger });
    this.mirror.on('put', (key, claim, revision, previous) => {
      this.count(previous, -1);
      this.count(claim, 1);
      this.onClaim(key, claim, revision);
    });
    this.mirror.on('delete', (_key, previous) => this.count(previous, -1));
  }

  private count(holder: Holder | undefined, delta: number): void {
    if (holder === undefined || holder.node === this.nodeId) return;
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
    this.refreshTimer = setInterval(() => void this.refresh(), claimTtlMs / 2).unref();
    this.sweepTimer = setInterval(() => void this.stale.sweep(claimTtlMs), sweepEveryMs).unref();
  }

  private holder(value: unknown): Holder | null {
    const claim = parseStreamClaim(value);
    if (claim === null) return null;
    let node = this.nodeNames.get(claim.node);
    if (node === undefined) this.nodeNames.set(claim.node, (node = claim.node));
    return { node, conn: claim.conn, owner: streamOwner({ account: claim.uuid, clientId: claim.clientId }), seenAt: Date.now() };
  }

  private onClaim(key: string, claim: Holder, revision: number): void {
    for (const s of this.local.get(key)) {
      if (s.id === claim.conn) continue;
      if (s.claimRevision === 0) s.foreignRevision = Math.max(s.foreignRevision, revision);
      else if (revision > s.claimRevision) this.onEvict(s);
    }
  }

  /**
   * Writes the stream's claim. A stream that a later claim already beat is evicted; one that closed
   * while its claim was being written (the client left) has the claim taken back at once.
   */
  async claim(stream: ClientStream): Promise<void> {
    const key = streamClaimKey(stream);
    stream.claimKey = key;
    this.local.add(key, stream);
    const revision = await this.kv.put(key, encodeRecord(this.recordOf(stream)));
    stream.claimRevision = revision;
    if (stream.closed) {
      await this.release(stream);
      return;
    }
    if (stream.foreignRevision > revision) this.onEvict(stream);
  }

  private recordOf(stream: ClientStream): StreamClaim {
    return {
      node: this.nodeId,
      conn: stream.id,
      uuid: stream.account,
      channel: stream.channel,
      clientId: stream.clientId,
      openedAt: new Date(stream.openedAt).toISOString(),
    };
  }

  /** Forgets a closed stream and deletes its claim if it is still the current one. */
  async release(stream: ClientStream): Promise<void> {
    const key = stream.claimKey;
    if (key === null) return;
    this.local.delete(key, stream);
    if (stream.claimRevision === 0) return;
    // Refused by the server when a later claim replaced ours, which is what we want.
    await this.kv.delete(key, { previousSeq: stream.claimRevision }).catch(() => undefined);
  }

  /** Live claims are rewritten before the bucket's max age would drop them. */
  private async refresh(): Promise<void> {
    for (const s of [...this.local.values()]) {
      if (s.closed || s.claimKey === null || s.claimRevision === 0) continue;
      if (this.mirror.get(s.claimKey)?.conn !== s.id) continue;
      try {
        s.claimRevision = await this.kv.update(s.claimKey, encodeRecord(this.recordOf(s)), s.claimRevision);
      } catch {
        // Someone claimed the key meanwhile; the mirror delivers that claim and evicts us.
      }
    }
  }

  async stop(): Promise<void> {
    if (this.refreshTimer !== undefined) clearInterval(this.refreshTimer);
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    await this.mirror.stop();
  }
}
