// The KV buckets every node watches (keys, bans, stream claims, node heartbeats) and the ingress's
// Idempotency-Key records: their settings in one place, created when missing and brought to the
// configured values when they exist.

import type { NatsConnection } from '@nats-io/nats-core';
import { nanos } from '@nats-io/nats-core';
import { DiscardPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from './logger.js';
import type { RelayConfig } from './config.js';
import { BUCKET_BANS, BUCKET_IDEMPOTENCY, BUCKET_KEYS, BUCKET_NODES, BUCKET_STREAM_OWNERS, BUCKET_STREAMS } from './subjects.js';

export interface Buckets {
  keys: KV;
  bans: KV;
  streams: KV;
  nodes: KV;
  idempotency: KV;
  /** Per account (or API key): the claim keys it holds and where, which the stream caps count. */
  streamOwners: KV;
}

/** Heartbeat records expire after this (garbage collection only: liveness is NODE_TIMEOUT). */
const NODE_RECORD_TTL_MS = 5 * 60_000;

type BucketConfig = Pick<RelayConfig, 'kvReplicas' | 'claimTtlMs' | 'stream' | 'idempotencyMaxBytes'>;

interface BucketSettings {
  bucket: string;
  history: number;
  ttlMs: number;
  /** -1: no bound in bytes. */
  maxBytes: number;
  /** Old: a full bucket forgets its oldest records to keep a new one; New (the KV default): refuses it. */
  discard: DiscardPolicy;
}

/**
 * Every bucket and its settings, in one place: each service creates what is missing and (with
 * `applyLimits`) brings existing buckets to these same values, so no setting depends on which
 * process happened to start first.
 */
function bucketSettings(config: BucketConfig): BucketSettings[] {
  const unbounded = { maxBytes: -1, discard: DiscardPolicy.New };
  // The order is the order of the Buckets members below.
  return [
    { bucket: BUCKET_KEYS, history: 5, ttlMs: 0, ...unbounded },
    { bucket: BUCKET_BANS, history: 5, ttlMs: 0, ...unbounded },
    { bucket: BUCKET_STREAMS, history: 1, ttlMs: config.claimTtlMs, ...unbounded },
    { bucket: BUCKET_NODES, history: 1, ttlMs: NODE_RECORD_TTL_MS, ...unbounded },
    // An Idempotency-Key is remembered as long as JetStream de-duplicates its entries, within
    // IDEMPOTENCY_MAX_BYTES: full, the oldest records go first, so a POST is never refused for want of
    // room and a resend of a forgotten key runs again (at-least-once; its entries' message ids still
    // de-duplicate within STREAM_DUPLICATE_WINDOW).
    { bucket: BUCKET_IDEMPOTENCY, history: 1, ttlMs: config.stream.duplicateWindowMs, maxBytes: config.idempotencyMaxBytes, discard: DiscardPolicy.Old },
    // Entries of dead nodes are not counted and are pruned at the owner's next write (owner-index.ts).
    { bucket: BUCKET_STREAM_OWNERS, history: 1, ttlMs: 0, ...unbounded },
  ];
}

/** Opens the buckets, creating missing ones; with `applyLimits`, existing ones get the configured replicas, ages and bounds. */
export async function openBuckets(nc: NatsConnection, jsm: JetStreamManager, config: BucketConfig, logger: Logger, applyLimits = true): Promise<Buckets> {
  const kvm = new Kvm(nc);
  const replicas = config.kvReplicas;
  const settings = bucketSettings(config);
  const opened = await Promise.all(
    settings.map((b) =>
      kvm.create(b.bucket, { history: b.history, replicas, ...(b.ttlMs > 0 ? { ttl: b.ttlMs } : {}), ...(b.maxBytes > 0 ? { max_bytes: b.maxBytes } : {}) }),
    ),
  );
  if (applyLimits) {
    for (const b of settings) {
      const info = await jsm.streams.info(`KV_${b.bucket}`);
      const maxAge = b.ttlMs > 0 ? nanos(b.ttlMs) : 0;
      const c = info.config;
      if (c.num_replicas !== replicas || c.max_age !== maxAge || c.max_bytes !== b.maxBytes || c.discard !== b.discard) {
        // JetStream refuses a duplicate window longer than the max age: a shorter CLAIM_TTL brings
        // the window down with it (the KV client set it to min(max age, 2 min) at creation).
        const duplicates = maxAge > 0 ? Math.min(c.duplicate_window, maxAge) : c.duplicate_window;
        await jsm.streams.update(`KV_${b.bucket}`, { ...c, num_replicas: replicas, max_age: maxAge, duplicate_window: duplicates, max_bytes: b.maxBytes, discard: b.discard });
        logger.info({ bucket: b.bucket, replicas, maxAgeMs: b.ttlMs, maxBytes: b.maxBytes }, 'applied KV_REPLICAS, record lifetime and size bound to a bucket');
      }
    }
  }
  const [keys, bans, streams, nodes, idempotency, streamOwners] = opened as [KV, KV, KV, KV, KV, KV];
  return { keys, bans, streams, nodes, idempotency, streamOwners };
}
