// The client library's stream against a real relay (nats-server, profile API, relay): typed frames,
// resume with Last-Event-ID across a relay restart and a dropped connection, the relay's `retry:` and
// close advice, and the watchdog.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, type RelayClientOptions } from '../../clients/typescript/src/index.js';
import { freePort } from '../../tools/ports.js';
import type { CreatedKey } from '../../services/core/keys.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { startProfileApi, type FakeProfileApi } from '../helpers/profile-api.js';
import { CLIENT_AGENT, Recorder, TestTransport } from '../helpers/relay-client.js';
import { RelayFixture, type Player } from '../helpers/relay.js';

let nats: TestNats;
let profile: FakeProfileApi;
let relay: RelayFixture;
let port: number;
let key: CreatedKey;
let n = 0;
const channel = (): string => `client-stream-${++n}.example.net`;
const clients: RelayClient[] = [];

// The relay's drain advice is pinned so the test can tell the client waited for it.
const DRAIN_RETRY_MS = 1500;
const DRAIN_CAP_MS = 2000;
// Timers may fire a millisecond before Date.now() says they are due.
const TIMER_SLACK_MS = 5;
const relayEnv = (): Record<string, string> => ({ PORT: String(port), RETRY_MIN: `${DRAIN_RETRY_MS}ms`, RETRY_MAX: `${DRAIN_RETRY_MS}ms` });

beforeAll(async () => {
  nats = await startTestNats();
  profile = await startProfileApi();
  port = await freePort();
  relay = await RelayFixture.start({ nats, profile, env: relayEnv() });
  key = await relay.createKey();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await relay?.close();
  await profile?.close();
  await nats?.stop();
});

function client(player: Player | null, server: string | undefined, extra: Partial<RelayClientOptions> = {}): RelayClient {
  const c = new RelayClient({
    url: `http://127.0.0.1:${port}`,
    server,
    clientId: key.clientId,
    clientSecret: key.clientSecret,
    userAgent: CLIENT_AGENT,
    ...(player === null ? {} : { token: () => player.token }),
    ...extra,
  });
  clients.push(c);
  return c;
}

describe('RelayClient stream', () => {
  it('delivers typed payloads with their meta and log id, in order, after connect() resolves', async () => {
    const ch = channel();
    const me = relay.player();
    const other = relay.player();
    const c = client(me, ch);
    const rec = new Recorder(c);
    await c.connect();
    expect(c.state).toEqual({ state: 'open', resumedFrom: null });
    const sender = client(other, ch);
    await sender.send([
      { type: 'chat', message: 'one' },
      { type: 'ping', player: other.uuid, position: { x: 1, y: 2, z: 3, dimension: 'NETHER' } },
    ]);
    await rec.until(() => rec.frames.some((f) => f.payload.type === 'ping'), 'the ping');
    const [chat, ping] = rec.frames.filter((f) => f.meta.uuid === other.uuid);
    expect(chat!.payload).toEqual({ type: 'chat', message: 'one' });
    expect(chat!.meta).toEqual({ uuid: other.uuid, agent: CLIENT_AGENT, channel: ch });
    expect(ping!.payload).toMatchObject({ type: 'ping', position: { dimension: 'nether' } });
    expect(Number(ping!.id)).toBe(Number(chat!.id) + 1);
    expect(c.lastEventId).toBe(ping!.id);
    expect(rec.names()).toEqual(['connecting', 'open']);
  });

  it('across a relay restart on the same NATS, a consumer gets every acknowledged frame of 25 exactly once, in order, having waited the drain advice', async () => {
    const ch = channel();
    const me = relay.player();
    const transport = new TestTransport();
    const consumer = client(me, ch, { fetch: transport.fetch, backoff: { baseMs: 100, capMs: DRAIN_CAP_MS } });
    const rec = new Recorder(consumer);
    await consumer.connect();
    // The sender retries through the restart (connection refused, 503 while starting) like any send.
    const sender = client(relay.player(), ch, { backoff: { baseMs: 50, capMs: 300 }, sendAttempts: 200 });
    const sent: string[] = [];
    let restarted!: Promise<void>;
    for (let i = 0; i < 25; i++) {
      const message = `frame ${i}`;
      const r = await sender.send({ type: 'chat', message });
      expect(r).toEqual({ accepted: 1, dropped: 0 });
      sent.push(message);
      if (i === 9) {
        // Stop the relay and start another on the same port, while frames keep being posted.
        restarted = (async () => {
          await relay.close();
          relay = await RelayFixture.start({ nats, profile, env: relayEnv() });
        })();
      }
    }
    await restarted;
    await rec.until(() => rec.chats().includes('frame 24'), 'frame 24 at the consumer');
    expect(rec.chats()).toEqual(sent);
    const ids = rec.frames.filter((f) => f.payload.type === 'chat').map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(25);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    // It was told to come back after DRAIN_RETRY_MS, and did not come back sooner (its own back-off,
    // from the relay's retry:, may ask longer, up to its cap).
    const reconnecting = await rec.state('reconnecting');
    expect(reconnecting).toMatchObject({ reason: 'draining' });
    expect(reconnecting.delayMs).toBeGreaterThanOrEqual(DRAIN_RETRY_MS);
    expect(reconnecting.delayMs).toBeLessThanOrEqual(DRAIN_CAP_MS);
    const drainedAt = rec.stateAt[rec.states.indexOf(reconnecting)]!;
    expect(transport.gets[1]!.at - drainedAt).toBeGreaterThanOrEqual(DRAIN_RETRY_MS - TIMER_SLACK_MS);
    // Every reconnect carried the last id it had seen.
    for (const g of transport.gets.slice(1)) expect(g.headers['last-event-id']).toMatch(/^\d+$/);
    const reopened = rec.states.filter((s) => s.state === 'open').at(-1);
    expect(reopened).toMatchObject({ state: 'open', resumedFrom: expect.stringMatching(/^\d+$/) });
  });

  it('after a connection drops without a word it backs off from the relay’s retry: (which raises its own 100 ms base) and resumes with Last-Event-ID', async () => {
    const ch = channel();
    const transport = new TestTransport();
    // random pinned near 1: the relay's retry: 2000 is the base, so the wait is 2000 + 0.99 x (3000 - 2000).
    const consumer = client(relay.player(), ch, { fetch: transport.fetch, backoff: { baseMs: 100, capMs: 3000, random: () => 0.99 } });
    const rec = new Recorder(consumer);
    await consumer.connect();
    const sender = client(relay.player(), ch);
    await sender.send({ type: 'chat', message: 'before' });
    await rec.until(() => rec.chats().includes('before'), 'before');
    const lastId = consumer.lastEventId;
    transport.cutStreams();
    await sender.send({ type: 'chat', message: 'while cut' });
    const reconnecting = await rec.state('reconnecting');
    expect(reconnecting).toMatchObject({ reason: 'network_error', delayMs: 2990 });
    await rec.until(() => rec.chats().includes('while cut'), 'the frame posted while cut');
    expect(rec.chats()).toEqual(['before', 'while cut']);
    expect(transport.gets).toHaveLength(2);
    expect(transport.gets[1]!.headers['last-event-id']).toBe(lastId);
    const droppedAt = rec.stateAt[rec.states.indexOf(reconnecting)]!;
    expect(transport.gets[1]!.at - droppedAt).toBeGreaterThanOrEqual(2990 - TIMER_SLACK_MS);
  });

  it('a stream that goes silent is dropped after watchdogMs and resumed without losing what was posted meanwhile', async () => {
    const ch = channel();
    const transport = new TestTransport();
    const consumer = client(relay.player(), ch, { fetch: transport.fetch, watchdogMs: 700, backoff: { baseMs: 50, capMs: 100 } });
    const rec = new Recorder(consumer);
    await consumer.connect();
    const sender = client(relay.player(), ch);
    await sender.send({ type: 'chat', message: 'heard' });
    await rec.until(() => rec.chats().includes('heard'), 'heard');
    transport.freezeStreams();
    const frozenAt = Date.now();
    await sender.send({ type: 'chat', message: 'swallowed by the silent connection' });
    const reconnecting = await rec.state('reconnecting');
    expect(reconnecting.reason).toBe('watchdog_timeout');
    expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(650);
    await rec.until(() => rec.chats().length === 2, 'the frame posted while silent');
    expect(rec.chats()).toEqual(['heard', 'swallowed by the silent connection']);
    expect(transport.gets[1]!.headers['last-event-id']).toBe(rec.frames.find((f) => f.payload.type === 'chat')!.id);
  });
});

describe('RelayClient stream with frequent server keepalives', () => {
  let fast: RelayFixture;
  beforeAll(async () => {
    fast = await RelayFixture.start({ nats, profile, env: { KEEPALIVE_INTERVAL: '1s' } });
  });
  afterAll(async () => {
    await fast?.close();
  });

  it('keepalives keep a quiet stream alive under a watchdog longer than their interval', async () => {
    const player = fast.player();
    const c = new RelayClient({
      url: fast.url,
      server: channel(),
      clientId: key.clientId,
      clientSecret: key.clientSecret,
      userAgent: CLIENT_AGENT,
      token: () => player.token,
      watchdogMs: 2500,
    });
    clients.push(c);
    const rec = new Recorder(c);
    await c.connect();
    // Four keepalive pairs span three intervals past the watchdog's reach of the first.
    await rec.until(() => rec.frames.filter((f) => f.payload.type === 'keepalive').length >= 4, 'four keepalives', 10_000);
    expect(rec.names()).toEqual(['connecting', 'open']);
    const keepalive = rec.frames.find((f) => f.payload.type === 'keepalive')!;
    expect(keepalive.id).toBeNull();
    expect(keepalive.meta.uuid).toBe('00000000-0000-0000-0000-000000000000');
  });
});
