// A mirror of a bucket with a change feed (FEED_BUCKETS) follows it without a consumer, over a real
// nats-server after `relay setup`: it loads what the bucket holds (delete markers included), hears
// later writes on the feed, and reads the bucket again when the feed lost something. The mirror's
// user may not hear `relay.kv.relay-bans.hidden.>`: the server drops those feed messages on their way
// to it, a real loss at the subscription, which only a read of the bucket can make good.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { Empty, headers, type NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { createLogger } from '../services/core/logger.js';
import { KvMirror, type MirrorEvents } from '../services/core/kv-mirror.js';
import { kvStream, kvSubject } from '../services/core/kv-internals.js';
import { BUCKET_BANS, BUCKET_KEYS, BUCKET_NODES, kvFeedSubject } from '../services/core/subjects.js';
import { startNatsNode, type NatsNode } from '../tools/nats-launcher.js';
import { setUpNats } from './helpers/nats-setup.js';
import { LogCapture } from './helpers/relay.js';

interface Rec {
  n: number;
}

const BUCKET = BUCKET_BANS;
const HIDDEN = 'hidden';
const parse = (v: unknown): Rec | null => (typeof v === 'object' && v !== null && typeof (v as { n?: unknown }).n === 'number' ? (v as Rec) : null);

let dir: string;
let node: NatsNode;
let writer: NatsConnection;
let jsm: JetStreamManager;
let kv: KV;
const opened: { mirror: KvMirror<unknown>; nc: NatsConnection }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-kv-feed-'));
  node = await startNatsNode({
    storeDir: dir,
    extraConfig: `authorization { users: [
      { user: operator, password: operator }
      { user: follower, password: follower, permissions: { subscribe: { allow: [">"], deny: ["${kvFeedSubject(BUCKET, `${HIDDEN}.>`)}"] } } }
    ] }`,
  });
  await setUpNats(node.url, { NATS_USER: 'operator', NATS_PASSWORD: 'operator' });
  writer = await connect({ servers: node.url, user: 'operator', pass: 'operator' });
  jsm = await jetstreamManager(writer);
  kv = await new Kvm(writer).open(BUCKET);
});
afterEach(async () => {
  for (const { mirror, nc } of opened.splice(0)) {
    await mirror.stop();
    await nc.close();
  }
});
afterAll(async () => {
  await writer.close();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function follow(options: { checkIntervalMs?: number; bucket?: string; logs?: LogCapture } = {}): Promise<{ mirror: KvMirror<Rec>; nc: NatsConnection }> {
  // A reconnect comes back at once (the default waits two seconds before dialing again).
  const nc = await connect({ servers: node.url, user: 'follower', pass: 'follower', reconnectTimeWait: 20 });
  const logger = createLogger({ level: 'warn', pretty: false, destination: options.logs ?? new LogCapture() });
  const mirror = new KvMirror(jetstream(nc), options.bucket ?? BUCKET, parse, logger, { checkIntervalMs: options.checkIntervalMs ?? 3_600_000 });
  opened.push({ mirror, nc });
  await mirror.start();
  return { mirror, nc };
}

/** Resolves with the arguments of the mirror's next `event` about `key` (listening from now). */
function next<E extends keyof MirrorEvents<Rec>>(mirror: KvMirror<Rec>, event: E, key: string): Promise<MirrorEvents<Rec>[E]> {
  return new Promise((resolve) => {
    const listener = (...args: MirrorEvents<Rec>[E]): void => {
      if (args[0] !== key) return;
      mirror.off(event, listener as never);
      resolve(args);
    };
    mirror.on(event, listener as never);
  });
}

const put = (key: string, n: number): Promise<number> => kv.put(key, JSON.stringify({ n }));

/** What kv.purge leaves (the bans bucket refuses its rollup, so the marker alone). */
async function purgeMarker(key: string): Promise<void> {
  const h = headers();
  h.set('KV-Operation', 'PURGE');
  await jetstream(writer).publish(kvSubject(BUCKET, key), Empty, { headers: h });
}

describe('a KV mirror that follows a change feed', () => {
  it('loads the keys the bucket holds, and tells of keys deleted or purged before it started', async () => {
    const a = await put('load.a', 1);
    await put('load.b', 2);
    await kv.delete('load.b');
    await put('load.c', 3);
    await purgeMarker('load.c');
    const nc = await connect({ servers: node.url, user: 'follower', pass: 'follower' });
    const mirror = new KvMirror(jetstream(nc), BUCKET, parse, createLogger({ level: 'silent', pretty: false }));
    opened.push({ mirror, nc });
    const deleted: [string, Rec | undefined][] = [];
    mirror.on('delete', (key, previous) => deleted.push([key, previous]));
    await mirror.start();
    expect(mirror.get('load.a')).toEqual({ n: 1 });
    expect(mirror.revision('load.a')).toBe(a);
    expect(mirror.get('load.b')).toBeUndefined();
    expect(deleted).toEqual(expect.arrayContaining([['load.b', undefined], ['load.c', undefined]]));
  });

  it('hears a put and a delete made after it started, by another connection', async () => {
    const { mirror } = await follow();
    const heardPut = next(mirror, 'put', 'live.a');
    const revision = await put('live.a', 5);
    expect(await heardPut).toEqual(['live.a', { n: 5 }, revision, undefined]);
    const heardDelete = next(mirror, 'delete', 'live.a');
    await kv.delete('live.a');
    const [, previous, markerRevision] = await heardDelete;
    expect(previous).toEqual({ n: 5 });
    expect(markerRevision).toBeGreaterThan(revision);
    expect(mirror.get('live.a')).toBeUndefined();
  });

  it('ignores a feed message older than what it holds', async () => {
    const { mirror } = await follow();
    const heard = next(mirror, 'put', 'stale.a');
    const revision = await put('stale.a', 1);
    await heard;
    const puts: string[] = [];
    mirror.on('put', (key) => puts.push(key));
    // What the stream would republish for an older entry of the key, sent straight to the feed.
    const h = headers();
    h.set('Nats-Stream', kvStream(BUCKET));
    h.set('Nats-Subject', kvSubject(BUCKET, 'stale.a'));
    h.set('Nats-Sequence', String(revision - 1));
    h.set('Nats-Last-Sequence', '0');
    writer.publish(kvFeedSubject(BUCKET, 'stale.a'), JSON.stringify({ n: 99 }), { headers: h });
    await writer.flush();
    // The server hands the follower the forged message before the one it republishes after it.
    const after = next(mirror, 'put', 'stale.b');
    await put('stale.b', 2);
    await after;
    expect(mirror.get('stale.a')).toEqual({ n: 1 });
    expect(mirror.revision('stale.a')).toBe(revision);
    expect(puts).toEqual(['stale.b']);
  });

  it('reads the bucket again once a later feed message shows one was lost: puts, deletes and keys gone', async () => {
    const { mirror } = await follow();
    const puts: string[] = [];
    const deletes: string[] = [];
    mirror.on('put', (key) => puts.push(key));
    mirror.on('delete', (key) => deletes.push(key));
    const found = next(mirror, 'put', `${HIDDEN}.a`);
    const hidden = await put(`${HIDDEN}.a`, 7); // never reaches the mirror's subscription
    const gone = await put(`${HIDDEN}.gone`, 8);
    await put('gap.b', 1); // two past the last heard
    expect((await found).slice(1)).toEqual([{ n: 7 }, hidden, undefined]);
    expect(mirror.revision(`${HIDDEN}.gone`)).toBe(gone);

    const deleted = next(mirror, 'delete', `${HIDDEN}.a`);
    const dropped = next(mirror, 'delete', `${HIDDEN}.gone`);
    await kv.delete(`${HIDDEN}.a`);
    // A purge of the stream leaves no marker: the key is simply absent from the next listing.
    await jsm.streams.purge(kvStream(BUCKET), { filter: kvSubject(BUCKET, `${HIDDEN}.gone`) });
    await put('gap.c', 2);
    expect((await deleted).slice(1, 2)).toEqual([{ n: 7 }]);
    expect((await dropped).slice(1)).toEqual([{ n: 8 }, gone]);
    expect(mirror.get('gap.c')).toEqual({ n: 2 });
    // Only what changed: the keys read again at the revision already held make no event.
    expect(puts.sort()).toEqual(['gap.b', 'gap.c', `${HIDDEN}.a`, `${HIDDEN}.gone`]);
    expect(deletes.sort()).toEqual([`${HIDDEN}.a`, `${HIDDEN}.gone`]);
  });

  it('reads the bucket again when its periodic check finds the stream past the last message heard', async () => {
    const { mirror } = await follow({ checkIntervalMs: 200 });
    const found = next(mirror, 'put', `${HIDDEN}.last`);
    const revision = await put(`${HIDDEN}.last`, 4); // lost, and nothing follows it
    expect((await found).slice(1, 3)).toEqual([{ n: 4 }, revision]);
  });

  it('reads the bucket again after its connection reconnects', async () => {
    const { mirror, nc } = await follow();
    const found = next(mirror, 'put', `${HIDDEN}.while-away`);
    const revision = await put(`${HIDDEN}.while-away`, 6);
    await nc.reconnect();
    expect((await found).slice(1, 3)).toEqual([{ n: 6 }, revision]);
  });

  it('ignores a malformed record, keeping the value the key had, and says so', async () => {
    await kv.put('bad.before', 'not json');
    const logs = new LogCapture();
    const { mirror } = await follow({ logs });
    expect(mirror.get('bad.before')).toBeUndefined();
    const good = next(mirror, 'put', 'bad.a');
    await put('bad.a', 1);
    await good;
    await kv.put('bad.a', JSON.stringify({ other: true }));
    const after = next(mirror, 'put', 'bad.after');
    await put('bad.after', 2);
    await after;
    expect(mirror.get('bad.a')).toEqual({ n: 1 });
    const warned = logs.lines.map((l) => JSON.parse(l) as { msg: string; key?: string }).filter((l) => l.msg === 'ignoring a malformed KV record');
    expect(warned.map((l) => l.key)).toEqual(['bad.before', 'bad.a']);
  });

  it('says once, not at each, that messages without stream headers reach its feed (anyone aiming replies there can send thousands)', async () => {
    const logs = new LogCapture();
    const { mirror } = await follow({ logs });
    for (let i = 0; i < 500; i++) writer.publish(kvFeedSubject(BUCKET, `aimed.${i}`), JSON.stringify({ n: i }));
    const after = next(mirror, 'put', 'aimed.after');
    await put('aimed.after', 1);
    await after;
    expect(mirror.get('aimed.0')).toBeUndefined();
    const warned = logs.lines.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg === 'ignoring a KV change feed message without its stream headers');
    expect(warned).toHaveLength(1);
  });

  it('keeps hearing the feed after a listener throws', async () => {
    const logs = new LogCapture();
    const { mirror } = await follow({ logs });
    mirror.on('put', (key) => {
      if (key === 'throws.a') throw new Error('a listener failed');
    });
    await put('throws.a', 1);
    const after = next(mirror, 'put', 'throws.b');
    await put('throws.b', 2);
    await after;
    expect(mirror.get('throws.a')).toEqual({ n: 1 });
    expect(logs.text).toContain('mirror failed on a message; the subscription goes on');
  });

  it('creates no consumer on any bucket it follows', async () => {
    const buckets = [BUCKET_KEYS, BUCKET_BANS, BUCKET_NODES];
    const mirrors = await Promise.all(buckets.map((bucket) => follow({ bucket, checkIntervalMs: 100 })));
    const heard = next(mirrors[1]!.mirror, 'put', 'consumers.a');
    await put('consumers.a', 1);
    await heard;
    for (const bucket of buckets) {
      expect(await jsm.consumers.list(kvStream(bucket)).next()).toEqual([]);
      expect((await jsm.streams.info(kvStream(bucket))).state.consumer_count).toBe(0);
    }
  });

  it('hears nothing more once stopped', async () => {
    const { mirror } = await follow({ checkIntervalMs: 100 });
    await mirror.stop();
    const puts: string[] = [];
    mirror.on('put', (key) => puts.push(key));
    const other = (await follow()).mirror;
    const heard = next(other, 'put', 'stopped.a');
    await put('stopped.a', 1);
    await heard;
    expect(puts).toEqual([]);
  });
});
