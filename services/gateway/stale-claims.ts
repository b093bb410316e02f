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

  constructor(options: { kv: KV; mirror: KvMirror<C>; nodeId: string; liveness: NodeLiveness; logger: Logger }) {
    this.kv = options.kv;
    this.mirror = options.mirror;
    this.nodeId = options.nodeId;
    this.liveness = options.liveness;
    this.logger = options.logger;
  }

  /** A restarted node with the same id cleans up what its previous life left behind. */
  async dropOwn(): Promise<void> {
    for (const [key, claim, revision] of [...this.mirror.items()]) {
      if (claim.node === this.nodeId) await this.deleteIfUnchanged(key, revision);
    }
  }

  /** Removes other nodes' claims that are dead (`claimTtlMs`: live claims are rewritten every half of it). */
  async sweep(claimTtlMs: number): Promise<number> {
    let removed = 0;
    const now = Date.now();
    for (const [key, claim, revision] of [...this.mirror.items()]) {
      if (claim.node === this.nodeId) continue;
      // Not rewritten for a whole CLAIM_TTL: the bucket has aged it out (no marker tells us), or its
      // holder failed to delete it. Either way it must not count against its owner any longer.
      if (now - claim.seenAt > claimTtlMs) {
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
