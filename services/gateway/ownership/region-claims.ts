// One stream per (account, channel) across regions (docs/REGIONS.md). Each region keeps its own
// claims bucket, so a region cut off from the others still opens streams; what keeps one stream
// per key across them is an announcement: once a stream's claim is written in its region, its
// gateway tells every other region (key, stream, node, opened at) on `relay.region-claims.<to>.<from>`
// (the sender in the subject, where each region's NATS permissions pin it, never in the body).
// A gateway that holds a stream of that key compares the two: the newer open wins (ties: node, then
// stream id, so every gateway ranks a pair alike). The loser is evicted where it lives; a local
// stream that outranks what it heard is announced back to the sender's region, so the sender evicts
// its own, which it may have announced before our claim existed (it then found nothing to compare).
// So of two opens anywhere, exactly one survives, the newer, once each side's messages arrive,
// whatever the order (test/unit/region-claims-interleavings.test.ts takes every one).
// Messages lost (a cut link) are made good by announcing every claim to a region whose link
// returns (region-links.ts) and to every region each REANNOUNCE_MS: a duplicate made while cut
// lives until then. Streams of their own key (no account or channel) are never announced. A claim
// opened more than MAX_CLOCK_AHEAD_MS after this gateway's now is refused and reported: it would win
// every comparison for as long as it lives (a clock far ahead, or a forged message).

import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { guarded, loggedThrows } from '../../core/guarded-callback.js';
import type { Logger } from '../../core/logger.js';
import { joinedRuns } from '../../core/message-runs.js';
import { maxPayload } from '../../core/nats-connection.js';
import { regionClaimsSubject } from '../../core/subjects.js';
import { systemTimers, type CancelTimer, type Timers } from '../../core/timers.js';
import { isSoloKey, streamClaimKey, type ClaimedStream } from './claim-keys.js';

/** How often every claim is announced to every other region, whatever the links said. */
export const REANNOUNCE_MS = 30_000;
/** An announcement's most bytes: far below NATS's default max payload (1 MiB); less when the server's is. */
const MAX_MESSAGE_BYTES = 256 * 1024;
/** How far ahead of this gateway's clock a heard open may be: regions' clocks agree far better than this. */
export const MAX_CLOCK_AHEAD_MS = 60_000;

/** A stream's claim as regions tell each other. */
export interface RegionClaim {
  readonly key: string;
  readonly conn: string;
  readonly node: string;
  /** Epoch ms. */
  readonly openedAt: number;
}

/** Whether `a` is the newer open of the two (the one that stays). */
export function outranks(a: RegionClaim, b: RegionClaim): boolean {
  if (a.openedAt !== b.openedAt) return a.openedAt > b.openedAt;
  if (a.node !== b.node) return a.node > b.node;
  return a.conn > b.conn;
}

/** How a gateway tells other regions of its claims and hears theirs. */
export interface RegionClaimLinks {
  listen(heard: (from: string, claims: readonly RegionClaim[]) => void): void;
  announce(to: string, claims: readonly RegionClaim[]): void;
  close(): void;
}

export interface RegionClaimsOptions {
  links: RegionClaimLinks;
  nodeId: string;
  /** The other regions. */
  others: readonly string[];
  evict: (streamId: string) => void;
  /** A heard claim opened too far ahead of `now` (MAX_CLOCK_AHEAD_MS): ignored, and told here. */
  refused?: (from: string, claim: RegionClaim) => void;
  timers?: Timers;
  now?: () => number;
  reannounceMs?: number;
}

export class RegionClaims {
  private readonly o: RegionClaimsOptions;
  private readonly timers: Timers;
  /** This node's announced streams by key (several only while the claim rules settle a local duplicate). */
  private readonly byKey = new Map<string, Map<string, RegionClaim>>();
  private readonly keyOf = new Map<string, string>();
  /** Announcements waiting for the end of the turn, by region, then stream (each stream once per message). */
  private readonly queued = new Map<string, Map<string, RegionClaim>>();
  private flushQueued = false;
  private cancelBackstop: CancelTimer | null = null;

  constructor(options: RegionClaimsOptions) {
    this.o = options;
    this.timers = options.timers ?? systemTimers;
  }

  start(): void {
    this.o.links.listen((from, claims) => this.heard(from, claims));
    this.scheduleBackstop();
  }

  stop(): void {
    this.cancelBackstop?.();
    this.cancelBackstop = null;
    this.o.links.close();
  }

  /** The stream's claim is written in this region: every other region hears of it. */
  claimed(stream: ClaimedStream): void {
    const key = streamClaimKey(stream);
    if (isSoloKey(key)) return;
    const claim: RegionClaim = { key, conn: stream.id, node: this.o.nodeId, openedAt: stream.openedAt };
    let streams = this.byKey.get(key);
    if (streams === undefined) this.byKey.set(key, (streams = new Map<string, RegionClaim>()));
    streams.set(stream.id, claim);
    this.keyOf.set(stream.id, key);
    for (const region of this.o.others) this.queue(region, claim);
  }

  released(streamId: string): void {
    const key = this.keyOf.get(streamId);
    if (key === undefined) return;
    this.keyOf.delete(streamId);
    const streams = this.byKey.get(key);
    streams?.delete(streamId);
    if (streams?.size === 0) this.byKey.delete(key);
  }

  /** A region's link is back: it may have missed announcements meanwhile. */
  returned(region: string): void {
    if (!this.o.others.includes(region)) return;
    for (const claim of this.held()) this.queue(region, claim);
  }

  /** Claims another region announced: the older of each pair is evicted, or announced back. */
  heard(from: string, claims: readonly RegionClaim[]): void {
    if (!this.o.others.includes(from)) return;
    const latest = (this.o.now ?? Date.now)() + MAX_CLOCK_AHEAD_MS;
    for (const remote of claims) {
      const streams = this.byKey.get(remote.key);
      if (streams === undefined) continue;
      if (remote.openedAt > latest) {
        this.o.refused?.(from, remote);
        continue;
      }
      for (const local of [...streams.values()]) {
        if (local.conn === remote.conn) continue;
        if (outranks(remote, local)) {
          this.released(local.conn);
          this.o.evict(local.conn);
        } else {
          this.queue(from, local);
        }
      }
    }
  }

  private held(): RegionClaim[] {
    return [...this.byKey.values()].flatMap((streams) => [...streams.values()]);
  }

  private queue(region: string, claim: RegionClaim): void {
    let list = this.queued.get(region);
    if (list === undefined) this.queued.set(region, (list = new Map<string, RegionClaim>()));
    list.set(claim.conn, claim);
    if (this.flushQueued) return;
    this.flushQueued = true;
    this.timers.afterTurn(() => this.flush());
  }

  /** Sends what this turn queued: one message per region (more past MAX_MESSAGE_BYTES), of streams still held. */
  private flush(): void {
    this.flushQueued = false;
    for (const [region, list] of this.queued) {
      const held = [...list.values()].filter((c) => this.keyOf.get(c.conn) === c.key);
      if (held.length > 0) this.o.links.announce(region, held);
    }
    this.queued.clear();
  }

  private scheduleBackstop(): void {
    this.cancelBackstop = this.timers.after(this.o.reannounceMs ?? REANNOUNCE_MS, () => {
      for (const region of this.o.others) this.returned(region);
      this.scheduleBackstop();
    });
  }
}

/** Announcements over NATS core subjects, which cross a super-cluster's gateways. */
export class NatsRegionClaimLinks implements RegionClaimLinks {
  private sub: Subscription | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly here: string,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  listen(heard: (from: string, claims: readonly RegionClaim[]) => void): void {
    const prefix = regionClaimsSubject(this.here, '');
    this.sub = this.nc.subscribe(`${prefix}*`, {
      callback: guarded((err, msg) => {
        if (err !== null) return;
        const claims = parseAnnouncement(msg.string());
        if (claims !== null) heard(msg.subject.slice(prefix.length), claims);
      }, loggedThrows(this.logger, 'hearing claims of another region')),
    });
  }

  announce(to: string, claims: readonly RegionClaim[]): void {
    if (this.nc.isClosed()) return; // this node is stopping: as a message lost, the backstop would resend
    const limit = Math.min(MAX_MESSAGE_BYTES, maxPayload(this.nc));
    try {
      for (const text of encodeAnnouncements(claims, limit)) this.nc.publish(regionClaimsSubject(to, this.here), text);
    } catch (err) {
      this.logger.warn({ err, region: to }, 'announcing claims to another region failed: a duplicate stream there may live until the next announcement');
    }
  }

  close(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
  }
}

/** `{"claims":[[key,conn,node,openedAt],...]}`, split to stay under `maxBytes`. */
export function encodeAnnouncements(claims: readonly RegionClaim[], maxBytes = MAX_MESSAGE_BYTES): string[] {
  return joinedRuns(claims.map((c) => JSON.stringify([c.key, c.conn, c.node, c.openedAt])), '{"claims":[', ']}', maxBytes);
}

/** An announcement's claims, or null when it is not one; entries of the wrong shape are passed over. */
export function parseAnnouncement(text: string): RegionClaim[] | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const { claims } = v as { claims?: unknown };
  if (!Array.isArray(claims)) return null;
  const parsed: RegionClaim[] = [];
  for (const c of claims as unknown[]) {
    if (!Array.isArray(c) || c.length !== 4) continue;
    const [key, conn, node, openedAt] = c as unknown[];
    if (typeof key === 'string' && typeof conn === 'string' && typeof node === 'string' && typeof openedAt === 'number' && Number.isFinite(openedAt)) {
      parsed.push({ key, conn, node, openedAt });
    }
  }
  return parsed;
}
