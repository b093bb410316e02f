// The KV buckets, bound by name: the keys, bans, stream claims and node heartbeats every node
// watches, and the ingress's Idempotency-Key records. Binding makes no request: `relay setup`
// created them (nats-layout.ts has their settings) and nats-check.ts found
// them before a service gets here.

import type { JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { BUCKET_KEYS, claimsBucket, idempotencyBucket, nodesBucket } from './subjects.js';

export interface Buckets {
  keys: KV;
  bans: KV;
  streams: KV;
  nodes: KV;
  idempotency: KV;
}

/**
 * Binds every bucket (the Idempotency-Key records, claims and heartbeats: `region`'s; the bans:
 * those written by this process, credential-places.ts); reads go to direct gets, which setup allows on each.
 */
export async function bindBuckets(js: JetStreamClient, region: string | null, bansWritten: string): Promise<Buckets> {
  const kvm = new Kvm(js);
  const bind = (bucket: string): Promise<KV> => kvm.open(bucket, { allow_direct: true });
  const [keys, bans, streams, nodes, idempotency] = await Promise.all([
    bind(BUCKET_KEYS),
    bind(bansWritten),
    bind(claimsBucket(region)),
    bind(nodesBucket(region)),
    bind(idempotencyBucket(region)),
  ]);
  return { keys, bans, streams, nodes, idempotency };
}
