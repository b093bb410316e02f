// The gateway's side of stream ownership, assembled: the claim rules (ownership.ts) over the claims
// bucket (claim-store.ts), the hints that reach them (claim-hints.ts), the crash index
// (claim-index.ts) and the owner index the caps count (owner-index.ts). The gateway calls in one
// direction: claim at open, release at the end; evictions come out through `evict` only.

import type { Counter } from 'prom-client';
import type { Logger } from '../core/logger.js';
import type { NatsContext } from '../core/nats.js';
import type { NodeLiveness } from '../core/node-liveness.js';
import { streamClaimKey, streamOwner, type ClaimedStream } from './claim-keys.js';
import { NatsClaimHints } from './claim-hints.js';
import { ClaimIndex } from './claim-index.js';
import { NatsClaimStore } from './claim-store.js';
import { OwnerIndex, type RemoteHoldings } from './owner-index.js';
import { NatsOwnerRecords, type OwnerRecord } from './owner-records.js';
import { Ownership } from './ownership.js';

export interface MeshClaimsOptions {
  nats: NatsContext;
  nodeId: string;
  liveness: NodeLiveness;
  logger: Logger;
  replicas: number;
  claimTtlMs: number;
  received: Counter;
  evict: (streamId: string) => void;
}

export class MeshClaims {
  private readonly ownership: Ownership;
  private readonly hints: NatsClaimHints;
  private readonly index: ClaimIndex;
  private readonly owners: OwnerIndex;
  private readonly claimTtlMs: number;
  /** Streams whose claim was written, so counted in the owner index until they end. */
  private readonly counted = new Set<string>();

  constructor(o: MeshClaimsOptions) {
    const store = new NatsClaimStore(o.nats.buckets.streams, o.nats.jsm);
    this.claimTtlMs = o.claimTtlMs;
    this.owners = new OwnerIndex(new NatsOwnerRecords(o.nats.buckets.streamOwners), o.nodeId, (node) => o.liveness.isAlive(node));
    this.hints = new NatsClaimHints(o.nats.nc, o.nodeId, o.received);
    this.index = new ClaimIndex({
      ...o.nats,
      store,
      nodeId: o.nodeId,
      liveness: o.liveness,
      logger: o.logger,
      replicas: o.replicas,
      claimTtlMs: o.claimTtlMs,
      swept: (key, claim) => this.owners.drop(streamOwner({ account: claim.uuid, clientId: claim.clientId }), key, claim.node),
    });
    this.ownership = new Ownership({ store, hints: this.hints, nodeId: o.nodeId, evict: o.evict, index: this.index });
  }

  /** Sweeps for claims of dead gateways every `sweepEveryMs` (the node timeout). */
  async start(sweepEveryMs: number): Promise<void> {
    this.hints.listen(this.ownership);
    await this.index.start(sweepEveryMs);
    this.ownership.start(this.claimTtlMs);
  }

  remote(owner: string, key: string): Promise<RemoteHoldings> {
    return this.owners.remote(owner, key);
  }

  /** `seen`: the owner's record the open read for the caps (saves reading it again to add the key). */
  async claim(stream: ClaimedStream, seen?: OwnerRecord): Promise<void> {
    await this.ownership.claim(stream);
    // Ended (or replaced) while its claim was being written: nothing to count.
    if (!this.ownership.holds(stream.id)) return;
    this.counted.add(stream.id);
    this.owners.add(streamOwner(stream), streamClaimKey(stream), seen);
  }

  release(stream: ClaimedStream): void {
    this.ownership.release(stream.id);
    if (this.counted.delete(stream.id)) this.owners.remove(streamOwner(stream), streamClaimKey(stream));
  }

  /** Reads every claim's key now: those taken over while this node could not hear are evicted. */
  verify(): Promise<void> {
    return this.ownership.verify();
  }

  /** How far this gateway's least recently renewed claim is past its renewal (0 while on time). */
  renewalOverdueMs(): number {
    return this.ownership.renewals.overdueMs();
  }

  /** Resolves once released claims are deleted and the owner index written. */
  async settled(): Promise<void> {
    await this.ownership.settled();
    await this.owners.settled();
  }

  stop(): void {
    this.ownership.stop();
    this.owners.stop();
    this.index.stop();
    this.hints.close();
  }
}
