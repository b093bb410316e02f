// Idempotency-Key records have a bound in bytes (IDEMPOTENCY_MAX_BYTES, issue 19): a keyed POST
// writes about 213 bytes that are kept STREAM_DUPLICATE_WINDOW. Full, the bucket forgets its oldest
// records: a POST is never refused for want of room, and a recent key is still answered as before.

import { DiscardPolicy } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { BUCKET_IDEMPOTENCY } from '../services/core/subjects.js';
import { RelayFixture } from './helpers/relay.js';

const BOUND = 4096;
const CH = 'idem-bound.example.net';
let first: RelayFixture | undefined;
let relay: RelayFixture;
let key: CreatedKey;

const bucketInfo = async (): Promise<{ maxBytes: number; discard: string; bytes: number }> => {
  const info = await relay.server.core.nats.jsm.streams.info(`KV_${BUCKET_IDEMPOTENCY}`);
  return { maxBytes: info.config.max_bytes, discard: info.config.discard, bytes: info.state.bytes };
};

beforeAll(async () => {
  // The bucket is created with the default bound first, as an existing mesh has it.
  first = await RelayFixture.start();
  relay = await RelayFixture.start({ nats: first.nats, env: { IDEMPOTENCY_MAX_BYTES: `${BOUND}B` } });
  key = await relay.createKey();
});
afterAll(async () => {
  await relay?.close();
  await first?.close();
});

describe('a bound in bytes on Idempotency-Key records', () => {
  it('an existing bucket takes the configured bound, discarding the oldest records when full', async () => {
    expect(await bucketInfo()).toMatchObject({ maxBytes: BOUND, discard: DiscardPolicy.Old });
  });

  it('many POSTs with distinct keys all succeed within the bound, and a recent key still answers a resend as the first time', async () => {
    const s = await relay.connect(relay.headers(relay.player(), key, CH));
    const sender = relay.player();
    for (let i = 0; i < 60; i++) {
      const res = await relay.post({ type: 'chat', message: `m${i}` }, relay.headers(sender, key, CH, { 'idempotency-key': `bound-${i}` }));
      expect([i, res.status, res.body]).toEqual([i, 200, { accepted: 1, dropped: 0 }]);
    }
    expect((await bucketInfo()).bytes).toBeLessThanOrEqual(BOUND);

    // The newest record is kept: the same body is answered again, another body is refused.
    const resend = await relay.post({ type: 'chat', message: 'm59' }, relay.headers(sender, key, CH, { 'idempotency-key': 'bound-59' }));
    expect([resend.status, resend.body]).toEqual([200, { accepted: 1, dropped: 0 }]);
    const reused = await relay.post({ type: 'chat', message: 'other' }, relay.headers(sender, key, CH, { 'idempotency-key': 'bound-59' }));
    expect([reused.status, reused.body['error']]).toEqual([422, 'idempotency_key_reused']);

    await relay.post({ type: 'chat', message: 'sentinel' }, relay.headers(sender, key, CH));
    const got = await s.pairsUntil((p) => p.data['message'] === 'sentinel');
    expect(got.map((p) => p.data['message'])).toEqual([...Array.from({ length: 60 }, (_, i) => `m${i}`), 'sentinel']);
  });
});
