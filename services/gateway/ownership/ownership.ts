// Stream ownership: one stream per (account, channel) across the mesh (spec 4.1 rule 4), and the
// stream caps counted across the mesh. This file is the room's one door: the gateway claims at open
// and releases at the end, asks the caps, and hears evictions through `evict` alone; no file outside
// ownership/ imports another of its files (eslint.config.js).
//
// Opening a stream writes its claim to KV relay-streams by compare-and-set: the node reads the key,
// writes at that revision, and so learns whom it replaced; it tells that node directly, and the
// replaced stream closes. KV orders the writes, so for two opens a millisecond apart on two nodes one
// write fails, is retried against the winner, and replaces it: exactly one survivor, the later claim.
// An eviction, in the order it happens:
//   opening node: claim-rules.ts claim -> claim-index.ts (the key noted first) -> claim-writes.ts
//     (read, compare-and-set, notice) -> claim-store.ts -> claim-notices.ts tell;
//   the replaced stream's node: claim-notices.ts (the notice heard) -> claim-rules.ts noticed ->
//     claim-losses.ts (once the step is over) -> `evict`, the gateway's.
// A sweep of a node taken for dead (claim-index.ts) tells that node the same way; it reads the key
// and writes its claim back. A gateway hears nothing else of the bucket (claim-rules.ts says what
// finds the changes nobody tells of).
// Around the claims: the crash index (claim-index.ts, claim-index-log.ts), and the caps, counted by
// asking the other gateways (owner-census.ts, stream-caps.ts). `Ownership.overNats` builds it on
// NATS; the interleaving tests build the claims' part on in-memory twins of each of its parts
// (test/helpers/interleavings/), with no caps (a census answers from memory, in one step).

import type { Counter } from 'prom-client';
import type { Logger } from '../../core/logger.js';
import type { MetaSilence } from '../../core/cut-off-start.js';
import type { NatsContext } from '../../core/nats.js';
import { GATEWAY_ROLES, type NodeLiveness } from '../../core/node-liveness.js';
import type { ClaimedStream } from './claim-keys.js';
import { NatsClaimNotices, type ClaimNotices } from './claim-notices.js';
import { ClaimIndex, type ClaimIndexOptions } from './claim-index.js';
import { NatsClaimIndexLog, type ClaimIndexLog } from './claim-index-log.js';
import { NatsClaimStore, type ClaimStore } from './claim-store.js';
import { OwnerCensus, type RemoteHoldings } from './owner-census.js';
import { ClaimRules } from './claim-rules.js';
import { NatsRegionClaimLinks, RegionClaims } from './region-claims.js';
import type { Timers } from '../../core/timers.js';
import { checkStreamCaps, remoteHoldings, type CappedStream, type LocalStreams, type StreamCaps } from './stream-caps.js';

/** The key a stream's claim is written under in relay-streams (tools that write or read the bucket use it). */
export { claimKey } from './claim-keys.js';
export type { RemoteHoldings, StreamCaps };

export interface OwnershipOptions {
  nats: NatsContext;
  nodeId: string;
  liveness: NodeLiveness;
  logger: Logger;
  /** The claims bucket's max age: claims are renewed within it. */
  claimTtlMs: number;
  /** Counts the claim notices this node hears (relay_claim_messages_received_total). */
  received: Counter;
  /** Counts the gateways that did not answer a census in time (relay_owner_census_unanswered_total). */
  unanswered: Counter;
  /** This node's streams (opening ones included), which its census answers count. */
  local: LocalStreams;
  evict: (streamId: string) => void;
  /** With regions: this gateway's and the others, whose gateways hear its claims (region-claims.ts). */
  regions: { here: string; all: readonly string[] } | null;
}

/** What ownership is built on. */
export interface OwnershipParts {
  nodeId: string;
  store: ClaimStore;
  notices: ClaimNotices;
  indexLog: ClaimIndexLog;
  /** Absent: no other gateway is asked (the interleaving tests, whose nodes have no caps). */
  census?: OwnerCensus;
  liveness: ClaimIndexOptions['liveness'];
  logger: Logger;
  /** The claims bucket's max age: claims are renewed within it. */
  claimTtlMs: number;
  evict: (streamId: string) => void;
  timers?: Timers;
  /** With regions: the claims told to and heard from the other regions. */
  regionClaims?: RegionClaims;
  /** The start-up's watch of the meta group's silence (core/nats.ts). */
  metaSilence?: MetaSilence;
}

export class Ownership {
  private readonly rules: ClaimRules;
  private readonly notices: ClaimNotices;
  private readonly index: ClaimIndex;
  private readonly census: OwnerCensus | undefined;
  private readonly regionClaims: RegionClaims | undefined;
  private readonly claimTtlMs: number;
  private readonly store: ClaimStore;

  static overNats(o: OwnershipOptions): Ownership {
    const { nats } = o;
    return new Ownership({
      ...o,
      store: NatsClaimStore.of(nats, o.logger),
      notices: new NatsClaimNotices(nats.nc, o.nodeId, o.received, o.logger),
      indexLog: new NatsClaimIndexLog({ ...nats, logger: o.logger }),
      metaSilence: nats.metaSilence,
      census: new OwnerCensus({
        nc: nats.nc,
        nodeId: o.nodeId,
        peers: () => aliveGateways(o.liveness),
        local: (owner) => o.local.ofOwner(owner),
        unanswered: () => o.unanswered.inc(),
        logger: o.logger,
      }),
      ...(o.regions === null
        ? {}
        : {
            regionClaims: new RegionClaims({
              links: new NatsRegionClaimLinks(nats.nc, o.regions.here, o.logger),
              nodeId: o.nodeId,
              others: o.regions.all.filter((r) => r !== o.regions?.here),
              evict: o.evict,
              refused: (from, claim) =>
                o.logger.warn({ region: from, node: claim.node, openedAt: claim.openedAt }, 'a claim heard from another region opened too far in the future was ignored: is that region’s clock ahead?'),
            }),
          }),
    });
  }

  constructor(p: OwnershipParts) {
    const { store, nodeId, liveness, timers } = p;
    this.claimTtlMs = p.claimTtlMs;
    this.store = store;
    this.census = p.census;
    this.regionClaims = p.regionClaims;
    this.notices = p.notices;
    this.index = new ClaimIndex({
      log: p.indexLog,
      store,
      nodeId,
      liveness,
      logger: p.logger,
      timers,
      notices: this.notices,
      inRegions: p.regionClaims !== undefined,
      ...(p.metaSilence === undefined ? {} : { metaSilence: p.metaSilence }),
    });
    this.rules = new ClaimRules({
      store,
      notices: this.notices,
      nodeId,
      evict: p.evict,
      index: this.index,
      timers,
    });
  }

  /** Hears notices and census questions from now on (`start` does it; the interleaving tests call only this). */
  listen(): void {
    this.notices.listen(this.rules);
    this.census?.listen();
    this.regionClaims?.start();
  }

  /**
   * Hears notices, sweeps what this node's previous life left, then renews its claims and
   * sweeps the claims of dead gateways every `sweepEveryMs` (the node timeout).
   */
  async start(sweepEveryMs: number): Promise<void> {
    this.listen();
    await this.index.start(sweepEveryMs);
    this.rules.start(this.claimTtlMs);
  }

  /** What other gateways hold for the stream's owner; nobody is asked when it has no cap. */
  holdingsElsewhere(s: CappedStream, caps: StreamCaps): Promise<RemoteHoldings> {
    if (this.census === undefined) return Promise.resolve({ count: 0, holdsKey: false });
    return remoteHoldings(s, caps, this.census);
  }

  /** Throws 429 too_many_streams when the stream would pass its owner's cap (stream-caps.ts). */
  checkCaps(s: CappedStream, caps: StreamCaps, local: LocalStreams, remote: RemoteHoldings): void {
    checkStreamCaps(s, caps, local, remote);
  }

  /** Writes the stream's claim in this region, then tells the other regions (region-claims.ts). */
  async claim(stream: ClaimedStream): Promise<void> {
    await this.rules.claim(stream);
    if (this.rules.holds(stream.id)) this.regionClaims?.claimed(stream);
  }

  release(stream: ClaimedStream): void {
    this.rules.release(stream.id);
    this.regionClaims?.released(stream.id);
  }

  /** A region's link is back (region-links.ts): it hears every claim held here again. */
  regionReturned(region: string): void {
    this.regionClaims?.returned(region);
  }

  /** Runs one renewal tick now (the timer's work; the interleaving tests call it as a step). */
  renewalTick(): Promise<void> {
    return this.rules.renewalTick();
  }

  /** Sweeps one node's claims now (what the sweep does for each dead gateway; tests call it as a step). */
  sweep(node: string): Promise<number> {
    return this.index.sweepNode(node);
  }

  /** Reads every claim's key now: those taken over while this node could not hear are evicted. */
  verify(): Promise<void> {
    return this.rules.verify();
  }

  /** How far this gateway's least recently renewed claim is past its renewal (0 while on time). */
  renewalOverdueMs(): number {
    return this.rules.renewalOverdueMs();
  }

  /** Resolves once released claims are deleted. */
  settled(): Promise<void> {
    return this.rules.settled();
  }

  stop(): void {
    this.rules.stop();
    this.index.stop();
    this.notices.close();
    this.census?.close();
    this.regionClaims?.stop();
    this.store.close?.();
  }
}

/** The gateways this node takes for alive now (itself among them). */
function aliveGateways(liveness: NodeLiveness): string[] {
  const now = Date.now();
  const nodes = new Set<string>();
  for (const n of liveness.mirror.values()) if (GATEWAY_ROLES.has(n.role) && liveness.isAlive(n.node, now)) nodes.add(n.node);
  return [...nodes];
}
