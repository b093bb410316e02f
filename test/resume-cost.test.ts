// What a resume costs JetStream: a reconnect that missed nothing, or only frames still in the
// gateway's resume window, makes no JetStream API request; a gap older than the window reads the
// log by message gets, with no consumer (issue 20; a gateway may not create consumers).
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { STREAM_NAME } from '../services/core/subjects.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture, type Player } from './helpers/relay.js';

let relay: RelayFixture;
/** The same nats-server, a gateway whose window holds only a few frames. */
let tiny: RelayFixture;
let watcher: NatsConnection;
let key: CreatedKey;
let n = 0;
const channel = (): string => `resume-cost-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start();
  tiny = await RelayFixture.start({ nats: relay.nats, env: { RESUME_WINDOW_BYTES: '1KiB' } });
  watcher = await connect({ servers: relay.nats.url });
  key = await relay.createKey();
});
afterAll(async () => {
  await watcher?.close();
  await tiny?.close();
  await relay?.close();
});

/** JetStream API requests about the event log (stream RELAY) while `work` runs, by subject. */
async function logRequestsDuring(work: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const sub = watcher.subscribe('$JS.API.>', {
    callback: (_err, msg) => {
      if (/\.RELAY(\.|$)/.test(msg.subject) || msg.subject === '$JS.API.INFO') seen.push(msg.subject);
    },
  });
  await watcher.flush();
  try {
    await work();
  } finally {
    // Every request the work made has reached the server before its answer did: one round trip more
    // and the watcher has seen them all.
    await watcher.flush();
    sub.unsubscribe();
  }
  return seen;
}

async function consumersLeft(): Promise<number> {
  let n = 0;
  for await (const _ of relay.server.core.nats.jsm.consumers.list(STREAM_NAME)) n++;
  return n;
}

/** A channel some other player keeps open on `on` (its gateway subscribes), and `me` seen up to a frame. */
async function seenUpTo(on: RelayFixture, ch: string, me: Player, sender: Player, frames: number): Promise<{ lastId: number; post: (m: string) => Promise<unknown> }> {
  await on.connect(on.headers(on.player(), key, ch));
  const post = (message: string): Promise<unknown> => on.post({ type: 'chat', message }, on.headers(sender, key, ch));
  const first = await on.connect(on.headers(me, key, ch));
  for (let i = 1; i <= frames; i++) await post(`a${i}`);
  const got = await first.pairsUntil((p) => p.data['message'] === `a${frames}`);
  first.close();
  await first.ended;
  return { lastId: got[got.length - 1]!.id!, post };
}

describe('what a resume costs JetStream', () => {
  it('a reconnect whose Last-Event-ID is the newest frame of its channel makes no JetStream request', async () => {
    const ch = channel();
    const me = relay.player();
    const { lastId, post } = await seenUpTo(relay, ch, me, relay.player(), 3);
    const requests = await logRequestsDuring(async () => {
      const resumed = await relay.connect({ ...relay.headers(me, key, ch), 'last-event-id': String(lastId) });
      await post('after');
      // The first frame it gets is the new one: nothing replayed twice, nothing missed.
      const next = await resumed.nextPair();
      expect(next.data['message']).toBe('after');
      expect(next.id).toBeGreaterThan(lastId);
    });
    expect(requests).toEqual([]);
  });

  it('a short gap is served from the resume window: no JetStream request, no gap, no duplicate, live frames during the resume in order', async () => {
    const ch = channel();
    const me = relay.player();
    const { lastId, post } = await seenUpTo(relay, ch, me, relay.player(), 2);
    for (let i = 1; i <= 10; i++) await post(`b${i}`);
    const before = await readMetrics(relay.url);
    const requests = await logRequestsDuring(async () => {
      const live = (async () => {
        for (let i = 1; i <= 10; i++) await post(`c${i}`);
      })();
      const resumed = await relay.open({ ...relay.headers(me, key, ch), 'last-event-id': String(lastId) });
      await live;
      const got = await resumed.pairsUntil((p) => p.data['message'] === 'c10');
      const expected = [...Array.from({ length: 10 }, (_, i) => `b${i + 1}`), ...Array.from({ length: 10 }, (_, i) => `c${i + 1}`)];
      expect(got.map((p) => p.data['message'])).toEqual(expected);
    });
    expect(requests).toEqual([]);
    const after = await readMetrics(relay.url);
    expect(after.get('relay_resumes_total{answered="memory"}')! - (before.get('relay_resumes_total{answered="memory"}') ?? 0)).toBe(1);
    expect(after.get('relay_resume_window_bytes')).toBeGreaterThan(0);
  });

  it('a gap older than the window is read from the log by message gets, on no consumer', async () => {
    const ch = channel();
    const me = tiny.player();
    const { lastId, post } = await seenUpTo(tiny, ch, me, tiny.player(), 1);
    // Far more than 1 KiB of frames: the oldest the client missed are gone from the window.
    for (let i = 1; i <= 20; i++) await post(`b${i}`);
    const requests = await logRequestsDuring(async () => {
      const resumed = await tiny.open({ ...tiny.headers(me, key, ch), 'last-event-id': String(lastId) });
      const got = await resumed.pairsUntil((p) => p.data['message'] === 'b20');
      expect(got.map((p) => p.data['message'])).toEqual(Array.from({ length: 20 }, (_, i) => `b${i + 1}`));
    });
    expect(requests.filter((s) => s.startsWith('$JS.API.CONSUMER.'))).toEqual([]);
    expect(requests.filter((s) => s === `$JS.API.STREAM.MSG.GET.${STREAM_NAME}`).length).toBeGreaterThanOrEqual(20);
    expect(await consumersLeft()).toBe(0);
    const metrics = await readMetrics(tiny.url);
    expect(metrics.get('relay_resumes_total{answered="log"}')).toBe(1);
  });

  it('a bridge stream (every channel) resuming from an old Last-Event-ID reads the whole log by message gets, in order, on no consumer', async () => {
    const bridgeKey = await tiny.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Receive]);
    const sender = tiny.player();
    const channels = [channel(), channel(), channel()];
    const bridge = await tiny.connect(tiny.headers(null, bridgeKey, null));
    await tiny.post({ type: 'chat', message: 'seen' }, tiny.headers(sender, key, channels[0]));
    const seen = await bridge.pairsUntil((p) => p.data['message'] === 'seen');
    bridge.close();
    await bridge.ended;
    // More than one window of gets (log-walk.ts), across channels, far more than 1 KiB.
    const expected = Array.from({ length: 90 }, (_, i) => `z${i + 1}`);
    for (const [i, message] of expected.entries()) await tiny.post({ type: 'chat', message }, tiny.headers(sender, key, channels[i % 3]));
    const before = await readMetrics(tiny.url);
    const requests = await logRequestsDuring(async () => {
      const resumed = await tiny.open({ ...tiny.headers(null, bridgeKey, null), 'last-event-id': String(seen[seen.length - 1]!.id) });
      const got = await resumed.pairsUntil((p) => p.data['message'] === 'z90');
      const chats = got.filter((p) => typeof p.data['message'] === 'string' && p.data['message'].startsWith('z'));
      expect(chats.map((p) => p.data['message'])).toEqual(expected);
      expect(chats.map((p) => p.meta.channel)).toEqual(expected.map((_, i) => channels[i % 3]));
      const ids = got.map((p) => p.id!);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    });
    expect(requests.filter((s) => s.startsWith('$JS.API.CONSUMER.'))).toEqual([]);
    expect(requests.filter((s) => s === `$JS.API.STREAM.MSG.GET.${STREAM_NAME}`).length).toBeGreaterThanOrEqual(90);
    expect(await consumersLeft()).toBe(0);
    const after = await readMetrics(tiny.url);
    expect(after.get('relay_resumes_total{answered="log"}')! - (before.get('relay_resumes_total{answered="log"}') ?? 0)).toBe(1);
  });

  it('a client ahead of this gateway (its id past the newest frame heard here) costs one request and no consumer, and gets each later frame once', async () => {
    const ch = channel();
    const me = relay.player();
    const { lastId, post } = await seenUpTo(relay, ch, me, relay.player(), 2);
    // An id this gateway has not heard on the channel, as one from a gateway further ahead would be:
    // a frame of another channel, posted after the client's last.
    const other = channel();
    const elsewhere = relay.headers(relay.player(), key, other);
    await relay.post({ type: 'chat', message: 'elsewhere' }, elsewhere);
    const ahead = (await relay.server.core.nats.jsm.streams.info(STREAM_NAME)).state.last_seq;
    expect(ahead).toBeGreaterThan(lastId);
    // The log goes on past the client's id (before, that was read on a consumer).
    await relay.post({ type: 'chat', message: 'elsewhere again' }, elsewhere);
    const requests = await logRequestsDuring(async () => {
      const resumed = await relay.connect({ ...relay.headers(me, key, ch), 'last-event-id': String(ahead) });
      await post('after');
      const next = await resumed.nextPair();
      expect(next.data['message']).toBe('after');
      expect(next.id).toBeGreaterThan(ahead);
    });
    expect(requests).toEqual([`$JS.API.STREAM.INFO.${STREAM_NAME}`]);
    expect(await consumersLeft()).toBe(0);
  });

  it('an id past the end of the log (made up, or from a log since replaced) does not hold back the frames that follow', async () => {
    const ch = channel();
    const me = relay.player();
    const { post } = await seenUpTo(relay, ch, me, relay.player(), 1);
    const resumed = await relay.connect({ ...relay.headers(me, key, ch), 'last-event-id': '9'.repeat(15) });
    await post('after');
    expect((await resumed.nextPair()).data['message']).toBe('after');
    expect(await consumersLeft()).toBe(0);
  });

  it('a resume on a channel this gateway hears nothing of costs one request for its newest frame, and no consumer', async () => {
    const ch = channel();
    const me = relay.player();
    const sender = relay.player();
    const first = await relay.connect(relay.headers(me, key, ch));
    await relay.post({ type: 'chat', message: 'seen' }, relay.headers(sender, key, ch));
    const seen = await first.nextPair();
    // The only stream of the channel leaves: the gateway unsubscribes and forgets it.
    first.close();
    await first.ended;
    const requests = await logRequestsDuring(async () => {
      const resumed = await relay.connect({ ...relay.headers(me, key, ch), 'last-event-id': String(seen.id) });
      await relay.post({ type: 'chat', message: 'after' }, relay.headers(sender, key, ch));
      expect((await resumed.nextPair()).data['message']).toBe('after');
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatch(/^\$JS\.API\.DIRECT\.GET\.RELAY\b/);
    expect(await consumersLeft()).toBe(0);
  });
});
