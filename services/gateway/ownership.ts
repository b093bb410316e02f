// One stream per (account, channel) across the mesh (spec 4.1 rule 4). Opening a stream writes its
// claim to KV relay-streams; every gateway mirrors the bucket and closes its local stream when the
// key names another connection at a later revision. Last writer wins, and since KV orders writes
// every node agrees on the survivor, even for opens a millisecond apart on two nodes.
//
// Stale claims never block anyone (a new open simply overwrites). They are removed when their stream
// closes (only if still ours), by the bucket's max age, and by a sweep that drops claims of nodes
// whose heartbeat stopped (a crashed gateway).

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

export function claimKey(account: string, channel: string): string {
  return `${account}.${channelToken(channel)}`;
}

export class Ownership {
  readonly mirror: KvMirror<StreamClaim>;
  private readonly kv: KV;
  private readonly nodeId: string;
  private readonly logger: Logger;
  private readonly liveness: NodeLiveness;
  private readonly onEvict: (stream: ClientStream) => void;
  private readonly local = new Map<string, Set<ClientStream>>();
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
    this.logger = options.logger;
    this.liveness = options.liveness;
    this.onEvict = options.onEvict;
    this.mirror = new KvMirror(options.js, BUCKET_STREAMS, parseStreamClaim, options.logger);
    this.mirror.on('put', (key, claim, revision) => this.onClaim(key, claim, revision));
  }

  /** Sweeps for claims of dead nodes every `sweepEveryMs` (the node timeout). */
  async start(claimTtlMs: number, sweepEveryMs: number): Promise<void> {
    await this.mirror.start();
    await this.dropOwnStaleClaims();
    this.refreshTimer = setInterval(() => void this.refresh(), claimTtlMs / 2).unref();
    this.sweepTimer = setInterval(() => void this.sweep(), sweepEveryMs).unref();
  }

  private onClaim(key: string, claim: StreamClaim, revision: number): void {
    const streams = this.local.get(key);
    if (streams === undefined) return;
    for (const s of streams) {
      if (s.id === claim.conn) continue;
      if (s.claimRevision === 0) s.foreignRevision = Math.max(s.foreignRevision, revision);
      else if (revision > s.claimRevision) this.onEvict(s);
    }
  }

  /** Writes the stream's claim. Resolves false when a later claim already won (the stream is evicted). */
  async claim(stream: ClientStream, account: string, channel: string): Promise<boolean> {
    const key = claimKey(account, channel);
    stream.claimKey = key;
    let set = this.local.get(key);
    if (set === undefined) this.local.set(key, (set = new Set()));
    set.add(stream);
    const record: StreamClaim = {
      node: this.nodeId,
      conn: stream.id,
      uuid: account,
      channel,
      clientId: stream.clientId,
      openedAt: stream.openedAt.toISOString(),
    };
    stream.claimRevision = await this.kv.put(key, encodeRecord(record));
    if (stream.foreignRevision > stream.claimRevision) {
      this.onEvict(stream);
      return false;
    }
    return true;
  }

  /** Forgets a closed stream and deletes its claim if it is still the current one. */
  async release(stream: ClientStream): Promise<void> {
    const key = stream.claimKey;
    if (key === null) return;
    const set = this.local.get(key);
    set?.delete(stream);
    if (set?.size === 0) this.local.delete(key);
    if (stream.claimRevision === 0) return;
    // Refused by the server when a later claim replaced ours, which is what we want.
    await this.kv.delete(key, { previousSeq: stream.claimRevision }).catch(() => undefined);
  }

  /** Live claims are rewritten before the bucket's max age would drop them. */
  private async refresh(): Promise<void> {
    for (const set of this.local.values()) {
      for (const s of set) {
        if (s.closed || s.claimKey === null || s.claimRevision === 0) continue;
        const current = this.mirror.get(s.claimKey);
        if (current === undefined || current.conn !== s.id) continue;
        try {
          s.claimRevision = await this.kv.update(s.claimKey, encodeRecord(current), s.claimRevision);
        } catch {
          // Someone claimed the key meanwhile; the mirror delivers that claim and evicts us.
        }
      }
    }
  }

  /** A restarted node with the same id cleans up what its previous life left behind. */
  private async dropOwnStaleClaims(): Promise<void> {
    for (const [key, claim, revision] of [...this.mirror.items()]) {
      if (claim.node === this.nodeId) await this.deleteIfUnchanged(key, revision);
    }
  }

  /** Claims of nodes whose heartbeat stopped are removed by whichever gateway notices first. */
  async sweep(): Promise<number> {
    let removed = 0;
    for (const [key, claim, revision] of [...this.mirror.items()]) {
      if (claim.node === this.nodeId || this.liveness.isAlive(claim.node)) continue;
      if (await this.deleteIfUnchanged(key, revision)) removed++;
    }
    if (removed > 0) this.logger.info({ removed }, 'removed stream claims of gateways that stopped');
    return removed;
  }

  private async deleteIfUnchanged(key: string, revision: number): Promise<boolean> {
    try {
      await this.kv.delete(key, { previousSeq: revision });
      return true;
    } catch {
      return false;
    }
  }

  async stop(): Promise<void> {
    if (this.refreshTimer !== undefined) clearInterval(this.refreshTimer);
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    await this.mirror.stop();
  }
}
