// Stream claims nobody will delete: those a restarted node left behind in its previous life, those
// of gateways whose heartbeat stopped (a crash), and those no longer rewritten (aged out of the
// bucket with no marker, or a holder that failed to delete them). None may block an open or count
// against its owner for ever; whichever gateway notices first removes them.

import type { KV } from '@nats-io/kv';
import type { KvMirror } from '../core/kv-mirror.js';
import type { Logger } from '../core/logger.js';
import type { NodeLiveness } from '../core/node-liveness.js';

/** What the sweep needs of a mirrored claim. */
export interface SweptClaim {
  node: string;
  /** When this node last saw the claim written (ms). */
  seenAt: number;
}

export class StaleClaims<C extends SweptClaim> {
  private readonly kv: KV;
  private readonly mirror: KvMirror<C>;
  private readonly nodeId: string;
  private readonly liveness: NodeLiveness;
  private readonly logger: Logger;
  /** The nodes that hold claims in the mirror (a sweep with all of them alive needs no walk). */
  private readonly holders: () => Iterable<string>;
  /** When the claims were last walked for ones no longer rewritten (ms). */
  private lastAgedWalk = Date.now();

  constructor(options: { kv: KV; mirror: KvMirror<C>; nodeId: string; liveness: NodeLiveness; logger: Logger; holders: () => Iterable<string> }) {
    this.kv = options.kv;
    this.mirror = options.mirror;
    this.nodeId = options.nodeId;
    this.liveness = options.liveness;
    this.logger = options.logger;
    this.holders = options.holders;
  }

  /** A restarted node with the same id cleans up what its previous life left behind. */
  async dropOwn(): Promise<void> {
    for (const [key, claim, revision] of [...this.mirror.items()]) {
      if (claim.node === this.nodeId) await this.deleteIfUnchanged(key, revision);
    }
  }

  /** Removes other nodes' claims that are dead (`claimTtlMs`: live claims are rewritten every half of it). */
  async sweep(claimTtlMs: number): Promise<number> {
    const now = Date.now();
    // Walking every claim of the mesh in every gateway every NODE_TIMEOUT was a few per cent of a
    // gateway's CPU at 100,000 claims (docs/BENCHMARKS.md, scale). A claim takes a whole CLAIM_TTL
    // to age out, so that check can wait a quarter of it; a dead node is known from the holders.
    const agedDue = now - this.lastAgedWalk >= claimTtlMs / 4;
    let deadHolder = false;
    for (const node of this.holders()) {
      if (node !== this.nodeId && !this.liveness.isAlive(node, now)) deadHolder = true;
    }
    if (!agedDue && !deadHolder) return 0;
    if (agedDue) this.lastAgedWalk = now;
    let removed = 0;
    for (const [key, claim, revision] of [...this.mirror.items()]) {
      if (claim.node === this.nodeId) continue;
      // Not rewritten for a whole CLAIM_TTL: the bucket has aged it out (no marker tells us), or its
      // holder failed to delete it. Either way it must not count against its owner any longer.
      if (agedDue && now - claim.seenAt > claimTtlMs) {
        await this.deleteIfUnchanged(key, revision);
        this.mirror.forget(key);
        removed++;
        continue;
      }
      if (this.liveness.isAlive(claim.node)) continue;
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
}
