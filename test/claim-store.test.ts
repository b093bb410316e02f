// The claims bucket over a real nats-server, as the ownership rules use it: a claim read back with
// its revision, writes and deletes only at the key's revision (JetStream's compare-and-set, the
// conflict told apart from every other failure), a delete marker that says who left it to a read
// from the leader, and a failure that is not a conflict when JetStream cannot answer. These are the
// semantics test/helpers/memory-claim-store.ts plays for the rules' own tests.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamClaim } from '../schemas/records.js';
import { loadConfig } from '../services/core/config.js';
import { RevisionConflict } from '../services/core/jetstream-errors.js';
import { kvStream } from '../services/core/kv-internals.js';
import { createLogger } from '../services/core/logger.js';
import { NatsReplies } from '../services/core/nats-replies.js';
import { openNatsContext, type NatsContext } from '../services/core/nats.js';
import { BUCKET_STREAMS } from '../services/core/subjects.js';
import { NatsClaimStore } from '../services/gateway/ownership/claim-store.js';
import { startTestNats, type TestNats } from './helpers/nats.js';
import { setUpNats } from './helpers/nats-setup.js';

const quiet = createLogger({ level: 'silent', pretty: false });
let nats: TestNats;
let ctx: NatsContext;
let store: NatsClaimStore;
let n = 0;

const claim = (conn: string): StreamClaim => ({ node: 'gw-test', conn, uuid: null, channel: null, clientId: 'relay_test', openedAt: new Date().toISOString() });
const key = (): string => `claim-store-test.${++n}`;

beforeAll(async () => {
  nats = await startTestNats();
  await setUpNats(nats.url);
  ctx = await openNatsContext(loadConfig('gateway', { NATS_URL: nats.url }), 'claim-store-test', quiet);
  store = NatsClaimStore.of(ctx, quiet);
});

afterAll(async () => {
  store.close();
  await ctx.nc.drain();
  await nats.stop();
});

describe('the claims bucket over NATS', () => {
  it('reads back a written claim at the revision the write answered, and a key never written as nothing', async () => {
    const k = key();
    expect(await store.get(k)).toBeNull();
    const revision = await store.write(k, claim('conn-a'), 0);
    expect(revision).toBeGreaterThan(0);
    expect(await store.get(k)).toEqual({ claim: expect.objectContaining({ conn: 'conn-a', node: 'gw-test' }), revision });
    expect(await store.get(k, true)).toEqual({ claim: expect.objectContaining({ conn: 'conn-a' }), revision });
    // The bucket holds what the KV client reads too: the same key, value and revision.
    const entry = await ctx.buckets.streams.get(k);
    expect(entry?.revision).toBe(revision);
    expect(entry?.json<StreamClaim>().conn).toBe('conn-a');
  });

  it('writes only at the key’s revision: a write at an older one, or at 0 over a claim, is a conflict and changes nothing', async () => {
    const k = key();
    const first = await store.write(k, claim('conn-a'), 0);
    await expect(store.write(k, claim('conn-b'), 0)).rejects.toBeInstanceOf(RevisionConflict);
    const second = await store.write(k, claim('conn-b'), first);
    await expect(store.write(k, claim('conn-c'), first)).rejects.toBeInstanceOf(RevisionConflict);
    expect(await store.get(k)).toEqual({ claim: expect.objectContaining({ conn: 'conn-b' }), revision: second });
  });

  it('deletes only at the key’s revision, and leaves a marker that a read from the leader tells a release from a sweep by', async () => {
    const released = key();
    const swept = key();
    const r1 = await store.write(released, claim('conn-a'), 0);
    const r2 = await store.write(swept, claim('conn-b'), 0);
    await expect(store.remove(released, r1 - 1, { by: 'release', conn: 'conn-a' })).rejects.toBeInstanceOf(RevisionConflict);
    const m1 = await store.remove(released, r1, { by: 'release', conn: 'conn-a' });
    const m2 = await store.remove(swept, r2, { by: 'sweep', conn: 'conn-b' });
    expect(m1).toBeGreaterThan(r2);
    // Any replica's read gives the marker and its revision; the leader's also who left it.
    expect(await store.get(released)).toEqual({ claim: null, revision: m1 });
    expect(await store.get(released, true)).toEqual({ claim: null, revision: m1, freed: { by: 'release', conn: 'conn-a' } });
    expect(await store.get(swept, true)).toEqual({ claim: null, revision: m2, freed: { by: 'sweep', conn: 'conn-b' } });
    // A marker is not "absent": a write at 0 conflicts, a write at the marker's revision lands.
    await expect(store.write(released, claim('conn-c'), 0)).rejects.toBeInstanceOf(RevisionConflict);
    expect(await store.write(released, claim('conn-c'), m1)).toBeGreaterThan(m2);
  });

  it('takes a value that is not a claim for a key that can be written over', async () => {
    const k = key();
    const revision = await ctx.buckets.streams.put(k, 'not a claim');
    expect(await store.get(k)).toEqual({ claim: null, revision });
    expect(await store.write(k, claim('conn-a'), revision)).toBeGreaterThan(revision);
  });

  it('fails without a conflict when JetStream cannot answer for the bucket, so the rules never take it for a lost race', async () => {
    // A read of a bucket gone waits out its timeout (no replica answers); writes are refused at once.
    const impatient = new NatsClaimStore({ replies: new NatsReplies(ctx.nc, ctx.inboxPrefix, quiet, 'test answers'), apiPrefix: ctx.js.apiPrefix, timeoutMs: 300 }, BUCKET_STREAMS, ctx.jsm);
    const info = await ctx.jsm.streams.info(kvStream(BUCKET_STREAMS));
    await ctx.jsm.streams.delete(kvStream(BUCKET_STREAMS));
    try {
      const k = key();
      const outcomes = await Promise.allSettled([impatient.get(k), impatient.write(k, claim('conn-a'), 0), impatient.remove(k, 1, { by: 'release', conn: 'conn-a' })]);
      for (const o of outcomes) {
        expect(o.status).toBe('rejected');
        expect((o as PromiseRejectedResult).reason).not.toBeInstanceOf(RevisionConflict);
      }
    } finally {
      impatient.close();
      await ctx.jsm.streams.add(info.config);
    }
    const k = key();
    expect(await store.write(k, claim('conn-a'), 0)).toBeGreaterThan(0);
  });

  it('answers each of many requests made at once with its own key', async () => {
    const keys = Array.from({ length: 200 }, key);
    const written = await Promise.all(keys.map((k, i) => store.write(k, claim(`conn-${i}`), 0)));
    const read = await Promise.all(keys.map((k) => store.get(k)));
    expect(read.map((r) => r?.claim?.conn)).toEqual(keys.map((_k, i) => `conn-${i}`));
    expect(read.map((r) => r?.revision)).toEqual(written);
  });
});
