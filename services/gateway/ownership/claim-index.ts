// Finding a crashed gateway's claims without walking every claim of the mesh. Each gateway notes
// the keys it claims in its own list of the claim index log (claim-index-log.ts: a subject of the
// stream RELAY_CLAIM_INDEX), before the claim itself, and the keys it renews, one message per
// event-loop turn; the log keeps them CLAIM_TTL, as long as the claims bucket keeps an unrenewed
// claim. When a gateway's heartbeat stops, one gateway (the live one with the lowest id, so not all
// of them, and only while it hears the mesh: core/sightings.ts) reads that node's list and deletes
// each key that still names the dead node, and tells that node (a notice on its own subject, as an
// eviction's: a node taken for dead may only have been paused, and writes back the claims of its
// streams still open). A restarted node does the same for its previous life, and tells nobody. The
// list is never emptied (no role may purge a stream): its messages age out after CLAIM_TTL, and a
// sweep that reads a key twice finds it no longer names the node. What the sweep misses ages out
// of the bucket by its max age.

import type { Logger } from '../../core/logger.js';
import { MetaSilence } from '../../core/cut-off-start.js';
import { retry } from '../../core/nats.js';
import { GATEWAY_ROLES, type NodeLiveness } from '../../core/node-liveness.js';
import type { ClaimNotices } from './claim-notices.js';
import type { ClaimIndexLog } from './claim-index-log.js';
import type { ClaimStore } from './claim-store.js';
import { systemTimers, type Timers } from '../../core/timers.js';

export interface ClaimIndexOptions {
  log: ClaimIndexLog;
  store: ClaimStore;
  nodeId: string;
  /** Which gateways there are (their heartbeats) and which of them are alive. */
  liveness: Pick<NodeLiveness, 'isAlive' | 'hearing'> & { readonly mirror: { values(): Iterable<{ node: string; role: string }> } };
  logger: Logger;
  /** Where the swept node is told of each claim swept from it. */
  notices: Pick<ClaimNotices, 'tell'>;
  timers?: Timers;
  /** In a mesh of regions, where this region may be cut off from the others at start. */
  inRegions?: boolean;
  /** The start-up's watch of the meta group's silence: the sweep does not wait it out again. */
  metaSilence?: MetaSilence;
}

/** What the ownership rules tell the index. */
export interface ClaimNotes {
  /** Resolves once the key is noted: the claim is written after. */
  claiming(key: string): Promise<void>;
  renewing(key: string): void;
}

export class ClaimIndex implements ClaimNotes {
  private readonly o: ClaimIndexOptions;
  private readonly timers: Timers;
  /** Keys noted this turn, and the promise of their message. */
  private pending: string[] = [];
  private flushed: Promise<void> | null = null;
  /** Dead nodes already swept (forgotten once they beat again). */
  private readonly swept = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(options: ClaimIndexOptions) {
    this.o = options;
    this.timers = options.timers ?? systemTimers;
  }

  /** Clears what this node's previous life left, then sweeps for stopped gateways every `sweepEveryMs`. */
  async start(sweepEveryMs: number): Promise<void> {
    // A cluster just started may time a request out (seen in CI on a fresh three-node cluster).
    // In a region cut off, the start-up has already waited the meta group's silence out: a sweep of
    // its own made a gateway there wait it out twice (a stranger's campaign run: 32-36 s to ready).
    const silence = this.o.metaSilence ?? new MetaSilence();
    await retry(() => this.sweepPreviousLife(silence), this.o.logger);
    this.timer = setInterval(() => void this.sweepDead().catch((err: unknown) => this.o.logger.warn({ err }, 'sweeping the claims of stopped gateways failed')), sweepEveryMs).unref();
  }

  /**
   * Notes a key about to be claimed; resolves once its message is handed to the connection, so the
   * claim, written after on the same connection, reaches NATS after it (a gateway that crashes
   * right after the claim still left its key here). The log stores it without an acknowledgement:
   * best effort, and a claim whose key it missed ages out of the bucket by its max age. Keys noted
   * in one event-loop turn (a burst of opens, a renewal tick) go in one message.
   */
  claiming(key: string): Promise<void> {
    return this.note(key);
  }

  /** Renewed keys, batched the same way (their order against the renewal does not matter). */
  renewing(key: string): void {
    void this.note(key);
  }

  private note(key: string): Promise<void> {
    this.pending.push(key);
    this.flushed ??= new Promise((resolve) =>
      this.timers.afterTurn(() => {
        const keys = this.pending;
        this.pending = [];
        this.flushed = null;
        this.o.log.append(this.o.nodeId, keys);
        resolve();
      }),
    );
    return this.flushed;
  }

  /** Sweeps each dead gateway once, if this is the live gateway with the lowest id and hears the mesh. */
  async sweepDead(now = Date.now()): Promise<number> {
    const { liveness, nodeId } = this.o;
    if (!liveness.hearing(now)) return 0;
    const gateways = [...liveness.mirror.values()].filter((n) => GATEWAY_ROLES.has(n.role)).map((n) => n.node);
    const dead = gateways.filter((n) => n !== nodeId && !liveness.isAlive(n, now));
    for (const n of this.swept) if (liveness.isAlive(n, now)) this.swept.delete(n);
    const sweeper = [nodeId, ...gateways.filter((n) => liveness.isAlive(n, now))].sort()[0];
    if (sweeper !== nodeId) return 0;
    let removed = 0;
    for (const node of dead) {
      if (this.swept.has(node)) continue;
      removed += await this.sweepNode(node);
      this.swept.add(node);
    }
    if (removed > 0) this.o.logger.info({ removed, nodes: dead }, 'removed stream claims of gateways that stopped');
    return removed;
  }

  /**
   * This node's claims from before it started. The index is read from its stream's leader, which a
   * region cut off from the others refuses once JetStream's meta group has no leader: once it has been
   * silent for CUT_OFF_AFTER_MS the gateway starts rather than leave the region's players without it,
   * and those claims age out by CLAIM_TTL.
   */
  private async sweepPreviousLife(silence: MetaSilence): Promise<number> {
    try {
      return await this.sweepNode(this.o.nodeId);
    } catch (err) {
      if (this.o.inRegions !== true || !silence.lasting(err)) throw err;
      this.o.logger.warn({ err }, "the claims of this gateway's previous life could not be swept (JetStream's meta group does not answer: this region may be cut off from the others); they age out by CLAIM_TTL");
      return 0;
    }
  }

  /** Deletes every claim the node's list holds that still names the node, and tells the node of each. */
  async sweepNode(node: string): Promise<number> {
    const keys = await this.o.log.read(node);
    let removed = 0;
    for (const key of keys) {
      const now = await this.o.store.get(key).catch(() => null);
      if (now?.claim?.node !== node) continue;
      try {
        // A marker naming the swept stream: if its node was only paused, it writes the claim back.
        const revision = await this.o.store.remove(key, now.revision, { by: 'sweep', conn: now.claim.conn });
        if (node !== this.o.nodeId) this.o.notices.tell(node, { kind: 'swept', key, conn: now.claim.conn, revision });
        removed++;
      } catch {
        // Written meanwhile (its node is back, or a new open took it): not ours to delete.
      }
    }
    return removed;
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }
}
