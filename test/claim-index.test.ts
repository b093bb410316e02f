// The crash index at its own level, over a real nats-server: every key a gateway claims is on its
// subject of RELAY_CLAIM_INDEX before the claim reaches the bucket (a crash between the two still
// leaves the key findable), a burst of opens costs one index message rather than one per key, a
// sweep of a dead node deletes exactly the claims still naming it and tells that node of each, and a
// node that was only paused writes back, on that notice alone, the claims of its streams still open.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { loadConfig } from '../services/core/config.js';
import { createLogger } from '../services/core/logger.js';
import { openNatsContext, type NatsContext } from '../services/core/nats.js';
import { NodeLiveness } from '../services/core/node-liveness.js';
import { kvSubject } from '../services/core/kv-internals.js';
import { BUCKET_STREAMS, CLAIM_INDEX_PREFIX, CLAIM_NOTICE_PREFIX } from '../services/core/subjects.js';
import { ClaimIndex } from '../services/gateway/ownership/claim-index.js';
import { batches, NatsClaimIndexLog } from '../services/gateway/ownership/claim-index-log.js';
import { claimRecord, streamClaimKey, type ClaimedStream } from '../services/gateway/ownership/claim-keys.js';
import { NatsClaimStore } from '../services/gateway/ownership/claim-store.js';
import { ClaimRules as Ownership } from '../services/gateway/ownership/claim-rules.js';
import { NatsClaimNotices } from '../services/gateway/ownership/claim-notices.js';
import { Counter } from 'prom-client';
import { startTestNats, type TestNats } from './helpers/nats.js';
import { setUpNats } from './helpers/nats-setup.js';

const quiet = createLogger({ level: 'silent', pretty: false });
let nats: TestNats;
let ctx: NatsContext;
let watcher: NatsConnection;
let liveness: NodeLiveness;
let n = 0;

function stream(channel: string | null): ClaimedStream {
  n++;
  return { id: `conn-${n}`, account: channel === null ? null : `acct-${n}`, clientId: 'relay_key', channel, openedAt: Date.now() };
}

function noticesFor(node: string): NatsClaimNotices {
  return new NatsClaimNotices(ctx.nc, node, new Counter({ name: 'claim_index_test_notices', help: 'test', registers: [] }), quiet);
}

const stores: NatsClaimStore[] = [];
/** A claim store over the test's connection, closed with it. */
function storeOf(): NatsClaimStore {
  const store = NatsClaimStore.of(ctx, quiet);
  stores.push(store);
  return store;
}

function indexFor(node: string, store = storeOf()): ClaimIndex {
  return new ClaimIndex({ log: new NatsClaimIndexLog({ ...ctx, logger: quiet }), store, nodeId: node, liveness, logger: quiet, notices: noticesFor(node) });
}

/** Resolves with the payload of the next message on `subject` that `matches` (subscribed before this returns). */
async function next(subject: string, matches: (payload: string, deleted: boolean) => boolean): Promise<() => Promise<string>> {
  let heard!: (payload: string) => void;
  const got = new Promise<string>((resolve) => (heard = resolve));
  const sub = watcher.subscribe(subject, {
    callback: (_err, m) => {
      if (!matches(m.string(), m.headers?.get('KV-Operation') === 'DEL')) return;
      sub.unsubscribe();
      heard(m.string());
    },
  });
  await watcher.flush();
  return () => got;
}

beforeAll(async () => {
  nats = await startTestNats();
  await setUpNats(nats.url);
  ctx = await openNatsContext(loadConfig('gateway', { NATS_URL: nats.url }), 'claim-index-test', quiet);
  watcher = await connect({ servers: nats.url });
  liveness = new NodeLiveness(ctx.js, null, 60_000, quiet);
  await liveness.start();
});
afterAll(async () => {
  for (const store of stores) store.close();
  await liveness.stop();
  await watcher.close();
  await ctx.nc.drain();
  await nats.stop();
});

describe('claim index', () => {
  it('every claimed key reaches the index before its claim reaches the bucket, and a burst of 60 opens is a handful of index messages', async () => {
    const index = indexFor('gw-order');
    await index.start(60_000);
    const store = storeOf();
    const notices = noticesFor('gw-order');
    const ownership = new Ownership({ store, notices, nodeId: 'gw-order', evict: () => undefined, index });
    // One watcher connection, one subscription for both: the order it hears is the order on the wire.
    const heard: Array<{ kind: 'index' | 'claim'; keys: string[] }> = [];
    const prefix = kvSubject(BUCKET_STREAMS, '');
    const subs = [CLAIM_INDEX_PREFIX + 'gw-order', `${prefix}>`].map((subject) =>
      watcher.subscribe(subject, {
        callback: (_err, m) => {
          heard.push(m.subject.startsWith(prefix) ? { kind: 'claim', keys: [m.subject.slice(prefix.length)] } : { kind: 'index', keys: m.string().split('\n') });
        },
      }),
    );
    await watcher.flush();
    // Streams with a channel (read, then written) and without one (written at once) alike.
    const streams = Array.from({ length: 60 }, (_, i) => stream(i % 3 === 0 ? null : `c${i}.example.net`));
    await Promise.all(streams.map((s) => ownership.claim(s)));
    await ctx.nc.flush();
    await watcher.flush();
    for (const s of streams) {
      const key = streamClaimKey(s);
      const indexed = heard.findIndex((h) => h.kind === 'index' && h.keys.includes(key));
      const claimed = heard.findIndex((h) => h.kind === 'claim' && h.keys.includes(key));
      expect(claimed, `the claim of ${key} reached the bucket`).toBeGreaterThanOrEqual(0);
      expect(indexed, `${key} was indexed before its claim`).toBeGreaterThanOrEqual(0);
      expect(indexed).toBeLessThan(claimed);
    }
    expect(heard.filter((h) => h.kind === 'index').length).toBeLessThanOrEqual(3);
    for (const sub of subs) sub.unsubscribe();
    ownership.stop();
    notices.close();
    index.stop();
  });

  it('a sweep of a dead node deletes the claims still naming it, leaves one another node took since, and a second sweep deletes nothing', async () => {
    const store = storeOf();
    const dead = indexFor('gw-dead', store);
    await dead.start(60_000);
    const [kept, taken] = [stream('kept.example.net'), stream('taken.example.net')];
    for (const s of [kept, taken]) {
      await dead.claiming(streamClaimKey(s));
      await store.write(streamClaimKey(s), claimRecord('gw-dead', s), 0);
    }
    // Another node replaced one of them since.
    const now = await store.get(streamClaimKey(taken));
    await store.write(streamClaimKey(taken), claimRecord('gw-alive', { ...taken, id: 'conn-elsewhere' }), now!.revision);
    dead.stop();
    const sweeper = indexFor('gw-sweeper', store);
    expect(await sweeper.sweepNode('gw-dead')).toBe(1);
    expect((await store.get(streamClaimKey(kept)))?.claim).toBeNull();
    expect((await store.get(streamClaimKey(taken)))?.claim?.node).toBe('gw-alive');
    // No role may purge a stream: the subject stays until it ages out, and reading it again is harmless.
    expect(await sweeper.sweepNode('gw-dead')).toBe(0);
    expect((await store.get(streamClaimKey(taken)))?.claim?.node).toBe('gw-alive');
  });

  it('a sweep tells the swept node, on its own notice subject, of each claim it deleted: the stream and the marker’s revision', async () => {
    const store = storeOf();
    const dead = indexFor('gw-told', store);
    await dead.start(60_000);
    const s = stream('told.example.net');
    const key = streamClaimKey(s);
    await dead.claiming(key);
    await store.write(key, claimRecord('gw-told', s), 0);
    dead.stop();
    const notice = await next(CLAIM_NOTICE_PREFIX + 'gw-told', () => true);
    expect(await indexFor('gw-teller', store).sweepNode('gw-told')).toBe(1);
    const marker = await store.get(key, true);
    expect(marker?.freed).toEqual({ by: 'sweep', conn: s.id });
    // `swept`, not `revision`: an earlier version reads only `revision`, and must not take a sweep for an eviction.
    expect(JSON.parse(await notice())).toEqual({ key, conn: s.id, swept: marker!.revision });
  });

  it('a node swept while it was only paused writes the claim of its open stream back on the sweep’s notice, and keeps the stream', async () => {
    const store = storeOf();
    const index = indexFor('gw-paused', store);
    await index.start(60_000);
    const notices = noticesFor('gw-paused');
    const evicted: string[] = [];
    const holder = new Ownership({ store, notices, nodeId: 'gw-paused', evict: (id) => evicted.push(id), index });
    notices.listen(holder);
    const s = stream('paused.example.net');
    const key = streamClaimKey(s);
    await holder.claim(s);
    await ctx.nc.flush();
    const writtenBack = await next(kvSubject(BUCKET_STREAMS, key), (payload, deleted) => !deleted && payload.includes(s.id));
    expect(await indexFor('gw-awake', store).sweepNode('gw-paused')).toBe(1);
    await writtenBack();
    expect((await store.get(key, true))?.claim).toMatchObject({ node: 'gw-paused', conn: s.id });
    expect(evicted).toEqual([]);
    expect(holder.holds(s.id)).toBe(true);
    holder.stop();
    notices.close();
    index.stop();
  });

  it('a sweep whose notice cannot be sent (its connection closed) still deletes and counts the claim', async () => {
    const store = storeOf();
    const dead = indexFor('gw-unheard', store);
    await dead.start(60_000);
    const s = stream('unheard.example.net');
    await dead.claiming(streamClaimKey(s));
    await store.write(streamClaimKey(s), claimRecord('gw-unheard', s), 0);
    dead.stop();
    const closed = await connect({ servers: nats.url });
    await closed.close();
    const notices = new NatsClaimNotices(closed, 'gw-closing', new Counter({ name: 'claim_index_test_closed', help: 'test', registers: [] }), quiet);
    const sweeper = new ClaimIndex({ log: new NatsClaimIndexLog({ ...ctx, logger: quiet }), store, nodeId: 'gw-closing', liveness, logger: quiet, notices });
    expect(await sweeper.sweepNode('gw-unheard')).toBe(1);
    expect((await store.get(streamClaimKey(s), true))?.freed).toEqual({ by: 'sweep', conn: s.id });
  });

  it('a gateway that cannot hear the mesh sweeps nobody, however long the others look silent', async () => {
    const store = storeOf();
    const silent = indexFor('gw-silent', store);
    await silent.start(60_000);
    const s = stream('silent.example.net');
    await silent.claiming(streamClaimKey(s));
    await store.write(streamClaimKey(s), claimRecord('gw-silent', s), 0);
    silent.stop();
    let hearing = false;
    const view = { isAlive: (node: string) => node === 'gw-deaf', hearing: () => hearing, mirror: { values: () => [{ node: 'gw-silent', role: 'gateway' }, { node: 'gw-deaf', role: 'gateway' }] } };
    const deaf = new ClaimIndex({ log: new NatsClaimIndexLog({ ...ctx, logger: quiet }), store, nodeId: 'gw-deaf', liveness: view, logger: quiet, notices: noticesFor('gw-deaf') });
    expect(await deaf.sweepDead()).toBe(0);
    expect((await store.get(streamClaimKey(s)))?.claim?.node).toBe('gw-silent');
    hearing = true;
    expect(await deaf.sweepDead()).toBe(1);
    expect((await store.get(streamClaimKey(s)))?.claim).toBeNull();
  });
});

describe('claim index messages', () => {
  it('keys of the longest channel names still fit the payload limit, split over messages, none lost', () => {
    // 253 characters of "a." become about 500 in a claim key (each dot is escaped).
    const keys = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(36, '0')}.${'a=2e'.repeat(126)}a`);
    const limit = 1024 * 1024 - 1024;
    const messages = batches(keys, limit);
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages) expect(Buffer.byteLength(m)).toBeLessThanOrEqual(limit);
    expect(messages.flatMap((m) => m.split('\n'))).toEqual(keys);
  });
});
