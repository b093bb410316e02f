// Hardening of connections and streams: each test is one attack or careless client, with a line on
// what it guards. Real nats-server, real profile API server, raw sockets.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { atDeadline } from '../services/core/deadline-timer.js';
import { Scope } from '../services/core/scopes.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { MAX_STREAMS_PER_ACCOUNT: '3', MAX_STREAMS_PER_KEY: '2' } });
});
afterAll(async () => {
  await relay?.close();
});

/** Sends a request on a raw socket and leaves it open; the caller reads or destroys it. */
async function rawRequest(baseUrl: string, head: string, body = '', localAddress?: string): Promise<{ socket: Socket; text: () => string; ended: Promise<void> }> {
  const url = new URL(baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port), ...(localAddress !== undefined ? { localAddress } : {}) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const ended = new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    socket.once('error', () => resolve());
  });
  socket.write(head + body);
  return { socket, text: () => text, ended };
}

function getHead(baseUrl: string, headers: Record<string, string>, path = '/'): string {
  const url = new URL(path, baseUrl);
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, 'accept: text/event-stream', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return lines.join('\r\n') + '\r\n\r\n';
}

describe('a client that gives up while its stream is being opened', () => {
  // Guards: GETs abandoned during a slow session check stayed open for ever in the gateway (streams,
  // subscriptions and claims grew, and every later frame of their channel was queued for them).
  it('leaves nothing behind: no open stream, no subscription, no claim', async () => {
    const own = await RelayFixture.start({ nats: relay.nats });
    try {
      const key = await own.createKey();
      own.profile.setDelay(300);
      const dropped = 20;
      await Promise.all(
        Array.from({ length: dropped }, async (_, i) => {
          const player = own.player();
          // Each from its own address, as players are (one address has only a few look-ups at once).
          const r = await rawRequest(own.url, getHead(own.url, own.headers(player, key, `abandoned-${i}.example.net`)), '', `127.0.0.${10 + i}`);
          // Gone while its session is being checked (each answer is held back 300 ms).
          await eventually(() => own.profile.calls.includes(player.token), 'the relay to ask about the session');
          r.socket.destroy();
        }),
      );
      // Every look-up has been answered: whatever the relay does with them has happened by the time
      // a later stream (opened after them) is greeted and hears a frame.
      await own.profile.answered(dropped);
      own.profile.setDelay(0);
      const ch = 'abandoned-0.example.net';
      const live = await own.connect(own.headers(own.player(), key, ch));
      await own.post({ type: 'chat', message: 'after' }, own.headers(own.player(), key, ch));
      expect((await live.nextPair()).data.message).toBe('after');
      const m = await readMetrics(own.url);
      expect(m.get('relay_streams_open')).toBe(1);
      expect(m.get('relay_channel_subscriptions')).toBe(1);
      const claims: string[] = [];
      for await (const k of await own.server.core.nats.buckets.streams.keys()) claims.push(k);
      expect(claims).toHaveLength(1);
    } finally {
      await own.close();
    }
  });
});

describe('POST bodies', () => {
  // Guards: a body that never finished held its connection (and a file descriptor) for ever.
  it('that never finish are answered 408 request_timeout and closed at BODY_TIMEOUT', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { BODY_TIMEOUT: '300ms' } });
    try {
      const url = new URL(own.url);
      const r = await rawRequest(
        own.url,
        `POST / HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`,
        '{"type":"chat",',
      );
      await r.ended;
      const [head, body] = r.text().split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(body!)).toMatchObject({ error: 'request_timeout', message: expect.any(String) });
    } finally {
      await own.close();
    }
  });

  // Guards: one slow body kept a SIGTERM'd process alive past SHUTDOWN_TIMEOUT.
  it('that never finish do not keep a shutting-down relay past SHUTDOWN_TIMEOUT', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { BODY_TIMEOUT: '1m', SHUTDOWN_TIMEOUT: '500ms' } });
    const url = new URL(own.url);
    const r = await rawRequest(
      own.url,
      `POST / HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n`,
    );
    // The server has taken the request in (it invites the body) before the shutdown starts.
    await eventually(() => r.text().includes('100 Continue'), 'the server to invite the body');
    r.socket.write('{');
    await own.close();
    // close() returned, and the client's connection was ended by it.
    await r.ended;
    expect(r.socket.destroyed).toBe(true);
  });
});

// The profile API queue under floods: test/session-lookup-fairness.test.ts (fairness by client
// address, never by the public client credentials).

describe('stream caps', () => {
  // Guards: one account opened 300 streams on 300 channels.
  it('an account holds at most MAX_STREAMS_PER_ACCOUNT streams; a burst cannot slip past; 429 too_many_streams', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const channels = Array.from({ length: 8 }, (_, i) => `cap-${i}.example.net`);
    const opened = await Promise.all(channels.map((ch) => relay.open(relay.headers(p, key, ch))));
    const ok = opened.filter((s) => s.status === 200);
    const refused = opened.filter((s) => s.status === 429);
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(5);
    const r = await refused[0]!.refusal();
    expect(r.body.error).toBe('too_many_streams');
    expect(r.body.message).toMatch(/most allowed/);
    // Reopening on a channel it already holds replaces that stream (eviction), so it is allowed.
    const again = channels[opened.indexOf(ok[0]!)]!;
    const replacement = await relay.open(relay.headers(p, key, again));
    expect(replacement.status).toBe(200);
    await ok[0]!.waitClosed();
  });

  // Guards: one bridge key opened 100 all-channel streams.
  it('a bridge key holds at most MAX_STREAMS_PER_KEY sessionless streams', async () => {
    const bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Receive]);
    const first = await relay.connect(relay.headers(null, bridge));
    const second = await relay.connect(relay.headers(null, bridge));
    const third = await relay.open(relay.headers(null, bridge));
    expect(third.status).toBe(429);
    expect((await third.refusal()).body.error).toBe('too_many_streams');
    // A place frees when a stream ends.
    first.close();
    await eventually(async () => (await relay.open(relay.headers(null, bridge))).status === 200, 'a place for the bridge after one of its streams closed');
    second.close();
  });

  // Guards: the cap counts streams on every node of the mesh, not just this one.
  it('counts streams held on other gateways', async () => {
    const other = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { MAX_STREAMS_PER_ACCOUNT: '3', RELAY_NODE_ID: 'second-gateway' } });
    try {
      const key = await relay.createKey();
      const p = relay.player();
      for (let i = 0; i < 3; i++) await relay.connect(relay.headers(p, key, `mesh-cap-${i}.example.net`));
      const refusedThere = await eventually(async () => {
        const s = await other.open(other.headers(p, key, 'mesh-cap-other.example.net'));
        if (s.status === 200) s.close();
        return s.status === 429 ? s : undefined;
      }, 'the other gateway to count this one’s streams');
      expect((await refusedThere.refusal()).body.error).toBe('too_many_streams');
    } finally {
      await other.close();
    }
  });
});

describe('key expiry', () => {
  // Guards: a key expiring more than 2^31 ms (24.8 days) away never closed its streams.
  it('bites however far away it is', () => {
    vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const fired: number[] = [];
      const thirtyDays = 30 * 86_400_000;
      atDeadline(thirtyDays, () => fired.push(Date.now()));
      vi.advanceTimersByTime(thirtyDays - 1);
      expect(fired).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(fired).toEqual([thirtyDays]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a key whose expiry an operator changes', () => {
  // Guards: a stream armed its expiry once, at open; an expiry set or moved later never closed it.
  it('closes its open streams at the new time', async () => {
    const k = await relay.createKey();
    const s = await relay.connect(relay.headers(relay.player(), k, 'expiry-moved.example.net'));
    const bucket = relay.server.core.nats.buckets.keys;
    const entry = (await bucket.get(k.clientId))!;
    const record = { ...entry.json<Record<string, unknown>>(), expiresAt: new Date(Date.now() + 500).toISOString() };
    await bucket.update(k.clientId, JSON.stringify(record), entry.revision);
    await s.waitForComment(/key expired/, 10_000);
    await s.waitClosed();
  });
});

describe('the channel of a GET', () => {
  // Guards: a repeated ?host= picked the first one; it is ambiguous.
  it('named twice with ?host= is refused with 400 invalid_channel', async () => {
    const key = await relay.createKey();
    const s = await relay.open(relay.headers(relay.player(), key), { path: '/?host=a.example.net&host=b.example.net' });
    expect(s.status).toBe(400);
    expect((await s.refusal()).body.error).toBe('invalid_channel');
  });
});

describe('bucket settings', () => {
  // Guards: relay-streams got the CLAIM_TTL of whichever service started first (an ingress ignored it).
  // Now only relay setup applies it; services started after it, whatever their CLAIM_TTL, change nothing.
  it('relay setup applies CLAIM_TTL to the ownership bucket, and services started after it leave it as it is', async () => {
    const own = await RelayFixture.start({ service: 'ingress', env: { CLAIM_TTL: '3h' } });
    try {
      const maxAge = async (): Promise<number> => (await own.server.core.nats.jsm.streams.info('KV_relay-streams')).config.max_age;
      expect(await maxAge()).toBe(3 * 3_600_000 * 1e6);
      const gateway = await RelayFixture.start({ service: 'gateway', nats: own.nats, profile: own.profile, setup: false, env: { CLAIM_TTL: '2h' } });
      await gateway.close();
      expect(await maxAge()).toBe(3 * 3_600_000 * 1e6);
      expect(gateway.logs.text).toMatch(/CLAIM_TTL asks for max age 2h, but bucket relay-streams has 3h/);
    } finally {
      await own.close();
    }
  });

  // Guards: the bucket's 2-minute duplicate window made JetStream refuse a max age under it, and a
  // gateway restarted with CLAIM_TTL=1m retried "JetStream not ready" for ever.
  it('relay setup with CLAIM_TTL=1m, its minimum, brings the ownership bucket down to 1 minute and a gateway starts on it', async () => {
    const own = await RelayFixture.start({ service: 'ingress' });
    try {
      const gateway = await RelayFixture.start({ service: 'gateway', nats: own.nats, profile: own.profile, env: { CLAIM_TTL: '1m' } });
      await gateway.close();
      const config = (await own.server.core.nats.jsm.streams.info('KV_relay-streams')).config;
      expect(config.max_age).toBe(60_000 * 1e6);
      expect(config.duplicate_window).toBeLessThanOrEqual(config.max_age);
    } finally {
      await own.close();
    }
  });
});
