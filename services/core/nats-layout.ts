// Every JetStream stream and KV bucket the relay needs, in one list: the settings `relay setup`
// gives each (from the operator's environment), what a service cannot work without, and which
// services use it. `nats-setup.ts` creates and updates from this list with the operator's
// credentials; `nats-check.ts` compares what a service finds at start against it. Nothing else
// spells a stream's configuration but `log-plans.ts`, the event log's part of this list.

import { nanos } from '@nats-io/nats-core';
import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { kvStream, kvSubject } from './kv-internals.js';
import type { RelayConfig, ServiceKind } from './config.js';
import {
  AUDIT_STREAM_NAME,
  AUDIT_SUBJECTS,
  bansBucket,
  BUCKET_BANS,
  BUCKET_KEYS,
  claimIndex,
  claimsBucket,
  hasFeed,
  idempotencyBucket,
  kvFeedSubject,
  nodesBucket,
} from './subjects.js';
import { bucketCopyPlan, oneLogPlan, placedIn, regionLogPlans } from './log-plans.js';
import { SERVICE_KINDS } from './config/service-kinds.js';

/** The settings an operator chooses; a difference from them is harmless to a service (a warning). */
export interface StreamLimits {
  num_replicas: number;
  /** Nanoseconds; 0: kept for ever. */
  max_age: number;
  /** -1: no bound. */
  max_bytes: number;
  /** -1: no bound (the event log's per-channel share; a bucket's history). */
  max_msgs_per_subject: number;
  /** -1: no bound. Nothing the relay keeps is bounded by count alone. */
  max_msgs: number;
  /** Nanoseconds. */
  duplicate_window: number;
  discard: DiscardPolicy;
  storage: StorageType;
}

export interface StreamPlan {
  stream: string;
  /** How sentences name it: "the event log (stream RELAY)". */
  label: string;
  /** The KV bucket this stream backs. */
  bucket?: string;
  /** The KV bucket this stream is a copy of (a mirror in another region, read by direct gets). */
  copies?: string;
  /** With regions: the one region whose services use it (its log, its copies, its records); absent: every region's. */
  region?: string;
  limits: StreamLimits;
  /** The environment variable that sets each limit, for sentences. */
  sources: Partial<Record<keyof StreamLimits, string>>;
  /** The rest of its configuration: what a service cannot work without (checked at every start). */
  shape: Pick<StreamConfig, 'subjects'> & Partial<Pick<StreamConfig, 'republish' | 'allow_direct' | 'description' | 'placement' | 'mirror'>>;
  usedBy: readonly ServiceKind[];
}

/** What the plans are made from: the setup variables of the configuration. */
export type LayoutConfig = Pick<RelayConfig, 'stream' | 'regions' | 'kvReplicas' | 'claimTtlMs' | 'auditMaxAgeMs' | 'idempotencyMaxBytes'>;

/** Heartbeat records expire after this (garbage collection only: liveness is NODE_TIMEOUT). */
const NODE_RECORD_TTL_MS = 5 * 60_000;
/** JetStream refuses a duplicate window longer than the max age; the KV client's own default is 2 min. */
const DEFAULT_DUPLICATE_WINDOW_MS = 2 * 60_000;
const ALL: readonly ServiceKind[] = SERVICE_KINDS;

function duplicates(maxAgeMs: number): number {
  return nanos(maxAgeMs > 0 ? Math.min(maxAgeMs, DEFAULT_DUPLICATE_WINDOW_MS) : DEFAULT_DUPLICATE_WINDOW_MS);
}

interface BucketSpec {
  bucket: string;
  history: number;
  ttlMs: number;
  maxBytes: number;
  discard: DiscardPolicy;
  usedBy: readonly ServiceKind[];
  sources: Partial<Record<keyof StreamLimits, string>>;
}

/** A KV bucket's stream, shaped as the KV client creates one (so any KV client binds to it). */
function bucketPlan(b: BucketSpec, replicas: number): StreamPlan {
  return {
    stream: kvStream(b.bucket),
    label: `bucket ${b.bucket}`,
    bucket: b.bucket,
    limits: {
      num_replicas: replicas,
      max_age: b.ttlMs > 0 ? nanos(b.ttlMs) : 0,
      max_bytes: b.maxBytes,
      max_msgs_per_subject: b.history,
      max_msgs: -1,
      duplicate_window: duplicates(b.ttlMs),
      discard: b.discard,
      storage: StorageType.File,
    },
    sources: { num_replicas: 'KV_REPLICAS', ...b.sources },
    shape: {
      subjects: [kvSubject(b.bucket, '>')],
      allow_direct: true,
      // The change feed (subjects.ts). nats-server 2.9 cannot add a RePublish to a stream that
      // exists: `relay setup` recreates an older bucket with its entries (nats-setup.ts).
      ...(hasFeed(b.bucket) ? { republish: { src: kvSubject(b.bucket, '>'), dest: kvFeedSubject(b.bucket, '>') } } : {}),
    },
    usedBy: b.usedBy,
  };
}

/** Every stream and bucket, in the order setup creates them. */
export function natsLayout(config: LayoutConfig): StreamPlan[] {
  const s = config.stream;
  const regions = config.regions;
  const unbounded = { maxBytes: -1, discard: DiscardPolicy.New, sources: {} };
  const credential = (bucket: string): BucketSpec => ({ bucket, history: 5, ttlMs: 0, ...unbounded, usedBy: ALL });
  const credentials = [credential(BUCKET_KEYS), credential(BUCKET_BANS)]; // without regions
  // What opening a stream needs (the claims, who is alive, the crash index): per region, so a
  // region cut off from the others still opens streams (docs/REGIONS.md).
  const ownership = (region: string | null): { index: StreamPlan; claims: StreamPlan; nodes: StreamPlan } => {
    const index = claimIndex(region);
    return {
      // Each gateway's claim keys, kept as long as the claims bucket keeps an unrenewed claim.
      index: {
        stream: index.stream,
        label: `the claim index (stream ${index.stream})`,
        limits: { num_replicas: config.kvReplicas, max_age: nanos(config.claimTtlMs), max_bytes: -1, max_msgs_per_subject: -1, max_msgs: -1, duplicate_window: duplicates(config.claimTtlMs), discard: DiscardPolicy.Old, storage: StorageType.File },
        sources: { num_replicas: 'KV_REPLICAS', max_age: 'CLAIM_TTL' },
        shape: { subjects: [`${index.prefix}>`] },
        usedBy: ['gateway', 'all'],
      },
      claims: bucketPlan({ bucket: claimsBucket(region), history: 1, ttlMs: config.claimTtlMs, ...unbounded, sources: { max_age: 'CLAIM_TTL' }, usedBy: ['gateway', 'admin', 'all'] }, config.kvReplicas),
      nodes: bucketPlan({ bucket: nodesBucket(region), history: 1, ttlMs: NODE_RECORD_TTL_MS, ...unbounded, usedBy: ALL }, config.kvReplicas),
    };
  };
  // An Idempotency-Key is remembered as long as JetStream de-duplicates its entries, within
  // IDEMPOTENCY_MAX_BYTES: full, the oldest records go first, so a POST is never refused for want
  // of room (at-least-once for a forgotten key; its entries' message ids still de-duplicate).
  const idempotency = (region: string | null): StreamPlan =>
    bucketPlan(
      {
        bucket: idempotencyBucket(region),
        history: 1,
        ttlMs: s.duplicateWindowMs,
        maxBytes: config.idempotencyMaxBytes,
        discard: DiscardPolicy.Old,
        sources: { max_age: 'STREAM_DUPLICATE_WINDOW', max_bytes: 'IDEMPOTENCY_MAX_BYTES' },
        usedBy: ['ingress', 'all'],
      },
      config.kvReplicas,
    );
  const audit: StreamPlan = {
    stream: AUDIT_STREAM_NAME,
    label: `the audit trail (stream ${AUDIT_STREAM_NAME})`,
    // File storage whatever the event log uses: an audit trail that a restart loses is no audit trail.
    limits: { num_replicas: s.replicas, max_age: nanos(config.auditMaxAgeMs), max_bytes: -1, max_msgs_per_subject: -1, max_msgs: -1, duplicate_window: duplicates(config.auditMaxAgeMs), discard: DiscardPolicy.Old, storage: StorageType.File },
    sources: { num_replicas: 'STREAM_REPLICAS', max_age: 'AUDIT_MAX_AGE' },
    shape: { description: "Channel relay audit trail: operators' actions, who and when.", subjects: [AUDIT_SUBJECTS] },
    usedBy: ['admin', 'all'],
  };
  if (regions === null) {
    const { index, claims, nodes } = ownership(null);
    return [oneLogPlan(s), audit, index, ...credentials.map((b) => bucketPlan(b, config.kvReplicas)), claims, nodes, idempotency(null)];
  }
  // With regions (docs/REGIONS.md): each region's log and copies, its Idempotency-Key records, its
  // bans and what opening a stream needs, in the region; the audit trail and the keys in the home
  // region; and in every region a copy of the keys and of each other region's bans.
  const keys = placedIn(bucketPlan(credential(BUCKET_KEYS), config.kvReplicas), regions.home, true);
  const bansOf = (r: string): StreamPlan => placedIn(bucketPlan(credential(bansBucket(r)), config.kvReplicas), r, true);
  const copies = [keys, ...regions.all.map(bansOf)].flatMap((origin) => regions.all.filter((at) => at !== origin.region).map((at) => bucketCopyPlan(origin, at)));
  return [
    ...regionLogPlans(s, regions.all),
    placedIn(audit, regions.home, false),
    keys,
    ...regions.all.flatMap((r) => {
      const { index, claims, nodes } = ownership(r);
      return [bansOf(r), ...[idempotency(r), index, claims, nodes].map((plan) => placedIn(plan, r, true))];
    }),
    ...copies,
  ];
}

/**
 * What every stream must be, whatever it holds: kept by limits (interest or work-queue retention would
 * drop what the relay stores), no bound per message, and no roll-up headers: with them, one publish
 * by any role that may write one subject of the stream (its own heartbeat, a ban it issued) erases
 * every other subject's messages (every operator's ban). The KV client does not need them to delete.
 */
export const EVERY_STREAM = { retention: RetentionPolicy.Limits, max_msg_size: -1, allow_rollup_hdrs: false } as const;

/** The whole configuration a new stream is created with (a mirror takes no subjects of its own). */
export function newStreamConfig(plan: StreamPlan): Partial<StreamConfig> & { name: string } {
  const { subjects, ...shape } = plan.shape;
  return { name: plan.stream, ...EVERY_STREAM, ...shape, ...(subjects.length > 0 ? { subjects } : {}), ...plan.limits };
}

/**
 * A stream that should copy another and does not, or copies what it should not: a log taking a
 * mirror or sources could not be published to; a copy of the wrong log would serve other frames.
 */
export function copyShapeProblems(plan: StreamPlan, c: StreamConfig): string[] {
  const wanted = plan.shape.mirror?.name;
  if ((c.sources?.length ?? 0) > 0) return ['takes sources'];
  if (wanted === undefined) return c.mirror === undefined ? [] : ['is a mirror, so nothing can be published to it'];
  if (c.mirror?.name !== wanted) return [c.mirror === undefined ? `is not a copy of ${wanted}` : `copies ${c.mirror.name}, not ${wanted}`];
  return [];
}

/** The plans a service of this kind, in `region` (null: none), starts against. */
export function plansFor(layout: StreamPlan[], service: ServiceKind, region: string | null): StreamPlan[] {
  return layout.filter((p) => p.usedBy.includes(service) && (p.region === undefined || p.region === region));
}
