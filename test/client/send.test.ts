// RelayClient.send against a real relay: refusals as typed errors, resends under one Idempotency-Key
// that store nothing twice (a lost answer, a 503), and presence coalesced to presencePerSecond.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, RelayError, type Payload, type PresencePayload, type RelayClientOptions, type SendOutcome } from '../../clients/typescript/src/index.js';
import { freePort } from '../../tools/ports.js';
import type { CreatedKey } from '../../services/core/keys.js';
import { Scope } from '../../services/core/scopes.js';
import { CLIENT_AGENT, Recorder, TestTransport } from '../helpers/relay-client.js';
import { readMetrics } from '../helpers/metrics.js';
import { RelayFixture, type Player } from '../helpers/relay.js';

let relay: RelayFixture;
let key: CreatedKey;
let n = 0;
const channel = (): string => `client-send-${++n}.example.net`;
const clients: RelayClient[] = [];

beforeAll(async () => {
  relay = await RelayFixture.start();
  key = await relay.createKey();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await relay?.close();
});

function client(player: Player, server: string, extra: Partial<RelayClientOptions> = {}): RelayClient {
  const c = new RelayClient({
    url: relay.url,
    server,
    clientId: key.clientId,
    clientSecret: key.clientSecret,
    userAgent: CLIENT_AGENT,
    token: () => player.token,
    ...extra,
  });
  clients.push(c);
  return c;
}

/** A client listening on `server`, open when this resolves. */
async function listener(server: string): Promise<Recorder> {
  const c = client(relay.player(), server);
  const rec = new Recorder(c);
  await c.connect();
  return rec;
}

function presence(health: number): PresencePayload {
  return { type: 'presence', inventory: [], attributes: { absorption: 0, health, hunger: 20, oxygen: 300, saturation: 5 } };
}

describe('RelayClient.send', () => {
  it('throws 4xx refusals as RelayError with the relay’s code, status and details, without resending', async () => {
    const ch = channel();
    const transport = new TestTransport();
    const c = client(relay.player(), ch, { fetch: transport.fetch });
    const invalid = await c.send({ type: 'ping', player: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', position: { x: 0, y: -65, z: 0, dimension: 'overworld' } }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(RelayError);
    expect(invalid).toMatchObject({ code: 'invalid_payload', status: 400, details: [expect.objectContaining({ entry: 0, path: '/position/y' })] });
    const unknown = await c.send(JSON.parse('{"type":"teleport"}') as Payload).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'unknown_type', status: 400 });
    const chatOnly = await relay.createKey([Scope.Establish, `${Scope.Send}.chat`]);
    const narrow = new RelayClient({ url: relay.url, server: ch, clientId: chatOnly.clientId, clientSecret: chatOnly.clientSecret, userAgent: CLIENT_AGENT, token: () => relay.player().token, fetch: transport.fetch });
    await expect(narrow.send([{ type: 'chat', message: 'fine' }, { type: 'keepalive' }])).rejects.toMatchObject({ code: 'missing_scope', status: 403 });
    expect(transport.posts).toHaveLength(3);
  });

  it('a batch whose answer was lost after the relay stored it is resent under the same Idempotency-Key and stored once', async () => {
    const ch = channel();
    const rec = await listener(ch);
    const transport = new TestTransport();
    const c = client(relay.player(), ch, { fetch: transport.fetch, backoff: { baseMs: 50, capMs: 100 } });
    transport.loseAnswers(1);
    expect(await c.send([1, 2, 3].map((i) => ({ type: 'chat' as const, message: `batch ${i}` })))).toEqual({ accepted: 3, dropped: 0 });
    expect(transport.posts).toHaveLength(2);
    const [first, resend] = transport.posts;
    expect(first!.headers['idempotency-key']).toMatch(/^[A-Za-z0-9_.:-]{1,128}$/);
    expect(resend!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(resend!.body).toBe(first!.body);
    // A later frame marks the end: a duplicate would have been delivered before it.
    await c.send({ type: 'chat', message: 'marker' });
    await rec.until(() => rec.chats().includes('marker'), 'the marker');
    expect(rec.chats()).toEqual(['batch 1', 'batch 2', 'batch 3', 'marker']);
  });

  it('a 503 (the profile API is down) is resent after the relay’s Retry-After under the same key, and succeeds once the relay can', async () => {
    const ch = channel();
    const rec = await listener(ch);
    const transport = new TestTransport();
    // The cap admits the relay's Retry-After (advice beyond the cap is cut to it).
    const c = client(relay.player(), ch, { fetch: transport.fetch, backoff: { baseMs: 50, capMs: 5000 } });
    const answered = relay.profile.calls.length;
    relay.profile.setMode('down');
    const sent = c.send({ type: 'chat', message: 'after the outage' });
    // The relay asked the profile API (and answered 503 with Retry-After: 5): bring it back.
    await relay.profile.answered(answered + 1);
    relay.profile.setMode('normal');
    expect(await sent).toEqual({ accepted: 1, dropped: 0 });
    expect(transport.posts).toHaveLength(2);
    expect(transport.posts[1]!.at - transport.posts[0]!.at).toBeGreaterThanOrEqual(5000 - 5);
    expect(transport.posts[1]!.headers['idempotency-key']).toBe(transport.posts[0]!.headers['idempotency-key']);
    await rec.until(() => rec.chats().includes('after the outage'), 'the chat');
  }, 20_000);

  it('a 429 too_many_session_checks (this address checks too many sessions) is resent after the relay’s Retry-After under the same key, as a 503', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, env: { PROFILE_API_RATE_PER_ADDRESS: '1', PROFILE_API_RATE_BURST: '1' } });
    try {
      const ownKey = await own.createKey();
      // Another program on this address spends its one new session check.
      expect((await own.post({ type: 'chat', message: 'x' }, { authorization: 'Bearer not-a-session', 'x-irc-multiplayer-server': 'x.example.net' })).status).toBe(401);
      const transport = new TestTransport();
      const player = own.player();
      const c = new RelayClient({
        url: own.url,
        server: channel(),
        clientId: ownKey.clientId,
        clientSecret: ownKey.clientSecret,
        userAgent: CLIENT_AGENT,
        token: () => player.token,
        fetch: transport.fetch,
        backoff: { baseMs: 50, capMs: 5000 },
      });
      clients.push(c);
      expect(await c.send({ type: 'chat', message: 'behind a busy address' })).toEqual({ accepted: 1, dropped: 0 });
      expect(transport.posts).toHaveLength(2);
      expect(transport.posts[1]!.at - transport.posts[0]!.at).toBeGreaterThanOrEqual(1000 - 5);
      expect(transport.posts[1]!.headers['idempotency-key']).toBe(transport.posts[0]!.headers['idempotency-key']);
      expect((await readMetrics(own.url)).get('relay_refusals_total{code="too_many_session_checks"}')).toBe(1);
    } finally {
      await own.close();
    }
  });

  it('a 429 rate_limited (the program sends too much) is still thrown at once, not resent', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, env: { RATE_LIMIT_PER_SECOND: '0.001', RATE_LIMIT_BURST: '1' } });
    try {
      const ownKey = await own.createKey();
      const transport = new TestTransport();
      const player = own.player();
      const c = new RelayClient({ url: own.url, server: channel(), clientId: ownKey.clientId, clientSecret: ownKey.clientSecret, userAgent: CLIENT_AGENT, token: () => player.token, fetch: transport.fetch });
      clients.push(c);
      await c.send({ type: 'chat', message: 'one' });
      await expect(c.send({ type: 'chat', message: 'two' })).rejects.toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: expect.any(Number) });
      expect(transport.posts).toHaveLength(2);
    } finally {
      await own.close();
    }
  });

  it('gives up after sendAttempts when the relay cannot be reached, with network_error', async () => {
    const transport = new TestTransport();
    const c = new RelayClient({
      url: `http://127.0.0.1:${await freePort()}`,
      server: channel(),
      clientId: 'id',
      clientSecret: 'secret',
      userAgent: CLIENT_AGENT,
      token: () => 'token',
      fetch: transport.fetch,
      sendAttempts: 3,
      backoff: { baseMs: 50, capMs: 100 },
    });
    await expect(c.send({ type: 'chat', message: 'nobody' })).rejects.toMatchObject({ code: 'network_error', status: 0 });
    expect(transport.posts).toHaveLength(3);
    expect(new Set(transport.posts.map((p) => p.headers['idempotency-key'])).size).toBe(1);
  });
});

describe('RelayClient presence coalescing', () => {
  it('a burst of 50 snapshots goes out as two POSTs, the first and the latest; the others are superseded', async () => {
    const ch = channel();
    const rec = await listener(ch);
    const transport = new TestTransport();
    const me = relay.player();
    const c = client(me, ch, { fetch: transport.fetch });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => c.send(presence(i))));
    expect(transport.posts).toHaveLength(2);
    expect(results[0]).toEqual({ accepted: 1, dropped: 0 });
    expect(results[49]).toEqual({ accepted: 1, dropped: 0 });
    expect(results.slice(1, 49).every((r: SendOutcome) => 'superseded' in r && r.superseded)).toBe(true);
    await rec.until(() => rec.frames.filter((f) => f.meta.uuid === me.uuid).length === 2, 'two snapshots');
    const healths = rec.frames.filter((f) => f.meta.uuid === me.uuid).map((f) => (f.payload.type === 'presence' ? f.payload.attributes.health : NaN));
    expect(healths).toEqual([0, 49]);
  });

  it('snapshots handed over every 10 ms go out at most presencePerSecond, the latest last', async () => {
    const ch = channel();
    const rec = await listener(ch);
    const transport = new TestTransport();
    const me = relay.player();
    const c = client(me, ch, { fetch: transport.fetch, presencePerSecond: 5 });
    const pending: Array<Promise<SendOutcome>> = [];
    for (let i = 0; i < 80; i++) {
      pending.push(c.send(presence(i)));
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(pending);
    const starts = transport.posts.map((p) => p.at);
    // Each POST is timed when it reaches fetch, a few ms after the client started it, so each time
    // carries its own jitter (5 ms allowed) but the jitters never add up across an interval.
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(200 - 5);
    for (let i = 5; i < starts.length; i++) expect(starts[i]! - starts[i - 5]!).toBeGreaterThanOrEqual(1000 - 5);
    expect(starts.length).toBeGreaterThanOrEqual(3);
    await rec.until(() => rec.frames.filter((f) => f.meta.uuid === me.uuid).length === starts.length, 'every posted snapshot');
    const last = rec.frames.filter((f) => f.meta.uuid === me.uuid).at(-1)!;
    expect(last.payload).toMatchObject({ type: 'presence', attributes: { health: 79 } });
  });
});
