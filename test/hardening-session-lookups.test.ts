// Attacks on the session check, which anyone can reach without credentials (client credentials are
// public, DESIGN.md section 6). Real relay, real profile API server (test/helpers/profile-api.ts),
// real sockets from distinct loopback addresses (127.0.0.2 and up).
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil as eventually } from '../tools/poll.js';
import { postFrom } from './helpers/clients.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

const chat = { type: 'chat', message: 'hello' };

let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

/** Sends a whole POST from `from`, then destroys the connection once the relay is asking about `token`. */
async function postAndLeave(r: RelayFixture, from: string, token: string, headers: Record<string, string> = { authorization: `Bearer ${token}`, 'x-irc-multiplayer-server': 'left.example.net' }, payload: unknown = chat): Promise<void> {
  const body = JSON.stringify(payload);
  const req = request(new URL('/', r.url), {
    method: 'POST',
    localAddress: from,
    agent: false,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  req.on('error', () => undefined);
  req.end(body);
  await eventually(() => r.profile.calls.includes(token), `the relay to ask about ${token}`);
  req.destroy();
}

describe('a POST whose client leaves during the session check (leak.mjs)', () => {
  // Guards: the POST stayed in the in-flight set for ever (memory without bound, no credentials
  // needed), and every drain waited out SHUTDOWN_TIMEOUT for it.
  it('is no longer in flight once its connection closed, and a drain does not wait for it', async () => {
    const own = await RelayFixture.start({ nats: relay.nats });
    try {
      own.profile.setDelay(200);
      const answersBefore = own.profile.calls.length;
      for (let i = 0; i < 3; i++) await postAndLeave(own, '127.0.0.20', `left-during-check-${i}`);
      await own.profile.answered(answersBefore + 3);
      await eventually(async () => (await readMetrics(own.url)).get('relay_posts_in_flight') === 0, 'the in-flight POSTs to be cleared');
      await own.server.ingress!.drain();
    } finally {
      await own.close();
    }
  });
});

/** How an ingress counts a POST it did not store because its client had left. */
const UNAVAILABLE = 'relay_refusals_total{code="unavailable"}';

describe('a POST whose client leaves before it is stored', () => {
  // Guards: a client that gave up on a slow ingress (the region campaign's paused one) and sent its
  // POST to another region's ingress had it stored in both, and every reader heard it twice.
  it('is not stored: the channel hears only what comes after', async () => {
    const own = await RelayFixture.start({ nats: relay.nats });
    try {
      const key = await own.createKey();
      const channel = 'left-before-stored.example.net';
      const listener = await own.open(own.headers(own.player(), key, channel));
      await listener.ready();
      own.profile.setDelay(200);
      const leaver = own.player();
      const answersBefore = own.profile.calls.length;
      await postAndLeave(own, '127.0.0.23', leaver.token, own.headers(leaver, key, channel), { type: 'chat', message: 'abandoned' });
      await own.profile.answered(answersBefore + 1);
      await eventually(async () => (await readMetrics(own.url)).get(UNAVAILABLE) === 1, 'the abandoned POST to be refused');
      own.profile.setDelay(0);
      expect((await own.post({ type: 'chat', message: 'after' }, own.headers(own.player(), key, channel))).status).toBe(200);
      expect((await listener.nextPair()).data['message']).toBe('after');
      listener.close();
    } finally {
      await own.close();
    }
  });
});

describe('a keyed POST whose connection is closed right behind it', () => {
  // The close arrives in the same read as the request, after it: the session is known, so nothing
  // waits before the Idempotency-Key's record, after whose round trip the close has been read.
  it('is not stored, and its key runs again when resent', async () => {
    const own = await RelayFixture.start({ nats: relay.nats });
    try {
      const key = await own.createKey();
      const channel = 'closed-behind.example.net';
      const sender = own.player();
      const headers = own.headers(sender, key, channel);
      expect((await own.post({ type: 'chat', message: 'known' }, headers)).status).toBe(200);
      const listener = await own.open(own.headers(own.player(), key, channel));
      await listener.ready();
      const body = JSON.stringify({ type: 'chat', message: 'abandoned' });
      const head = Object.entries({ ...headers, host: new URL(own.url).host, 'idempotency-key': 'closed-behind-1', 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      const socket = connect(Number(new URL(own.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.end(`POST / HTTP/1.1\r\n${head}\r\n${body}`);
      socket.resume();
      await closed;
      await eventually(async () => (await readMetrics(own.url)).get(UNAVAILABLE) === 1, 'the abandoned POST to be refused');
      expect((await own.post({ type: 'chat', message: 'after' }, headers)).status).toBe(200);
      expect((await listener.nextPair()).data['message']).toBe('after');
      const resent = await own.post({ type: 'chat', message: 'abandoned' }, { ...headers, 'idempotency-key': 'closed-behind-1' });
      expect(resent.status).toBe(200);
      expect((await listener.nextPair()).data['message']).toBe('abandoned');
      listener.close();
    } finally {
      await own.close();
    }
  });
});

describe('one address cycling fresh junk tokens without credentials (flood.mjs)', () => {
  // Guards: each distinct junk token was a fresh upstream call (the gate bounds concurrency, not
  // rate): one address pushed hundreds of look-ups a second to the profile API, which limits by the
  // relay's address, and then every new player of the mesh was refused.
  it('starts at most its burst of look-ups, then is throttled with 429 too_many_session_checks and Retry-After without a call upstream; another address is served', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, env: { PROFILE_API_RATE_PER_ADDRESS: '0.001', PROFILE_API_RATE_BURST: '5' } });
    try {
      const refused: Array<{ status: number; error: unknown; retryAfter: number }> = [];
      for (let i = 0; i < 20; i++) {
        const r = await postFrom('127.0.0.21', own.url, chat, { authorization: `Bearer junk-rate-${i}`, 'x-irc-multiplayer-server': 'flood.example.net' });
        if (r.status !== 401) refused.push({ status: r.status, error: r.body['error'], retryAfter: Number(r.headers.get('retry-after')) });
      }
      expect(own.profile.calls.filter((t) => t.startsWith('junk-rate-'))).toHaveLength(5);
      expect(refused).toHaveLength(15);
      for (const r of refused) {
        expect(r).toMatchObject({ status: 429, error: 'too_many_session_checks' });
        expect(r.retryAfter).toBeGreaterThanOrEqual(1);
      }
      // A token found invalid is remembered: repeating it costs nothing, not even the rate.
      const again = await postFrom('127.0.0.21', own.url, chat, { authorization: 'Bearer junk-rate-0', 'x-irc-multiplayer-server': 'flood.example.net' });
      expect(again.body['error']).toBe('invalid_session');
      const key = await own.createKey();
      const player = await postFrom('127.0.0.22', own.url, chat, own.headers(own.player(), key, 'flood.example.net'));
      expect(player.status).toBe(200);
      expect(own.server.core.bans.list()).toEqual([]);
      expect((await readMetrics(own.url)).get('relay_session_lookups_refused_total{reason="address_rate"}')).toBe(15);
    } finally {
      await own.close();
    }
  });
});

describe('the profile API answering 429 (its rate limit, by the relay\'s address)', () => {
  // Guards: a 429 was neither remembered nor backed off from: the relay kept calling (thousands a
  // second once upstream answered fast), keeping the whole mesh locked out.
  it('stops every look-up for its Retry-After: 503 profile_api_unavailable with Retry-After, no call upstream, no ban', async () => {
    const own = await RelayFixture.start({ nats: relay.nats });
    try {
      const key = await own.createKey();
      own.profile.setMode('rate-limited');
      const first = await postFrom('127.0.0.23', own.url, chat, own.headers(own.player(), key, 'backoff.example.net'));
      expect(first.status).toBe(503);
      expect(own.profile.calls).toHaveLength(1);
      // Upstream has recovered, but asked for 10 s: nobody is looked up before then, from any address.
      own.profile.setMode('normal');
      for (const from of ['127.0.0.24', '127.0.0.25']) {
        const r = await postFrom(from, own.url, chat, own.headers(own.player(), key, 'backoff.example.net'));
        expect(r.status).toBe(503);
        expect(r.body).toEqual({ error: 'profile_api_unavailable', message: expect.any(String) });
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(10);
      }
      expect(own.profile.calls).toHaveLength(1);
      expect(own.server.core.bans.list()).toEqual([]);
      expect((await readMetrics(own.url)).get('relay_session_lookups_refused_total{reason="upstream_backoff"}')).toBe(2);
    } finally {
      await own.close();
    }
  });
});

describe('many addresses filling the whole look-up queue (flood.mjs with ADDRS=133)', () => {
  // Guards: a few hundred addresses, each within its share, filled PROFILE_API_MAX_QUEUE and every
  // new session of the mesh was refused 503 profile_api_busy.
  it("still lets in an address with nothing queued: the newest waiter of the longest queue is refused in its place", async () => {
    const own = await RelayFixture.start({ nats: relay.nats, env: { PROFILE_API_CONCURRENCY: '1', PROFILE_API_MAX_QUEUE: '4' } });
    try {
      const key = await own.createKey();
      own.profile.setMode('hang');
      const headers = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}`, 'x-irc-multiplayer-server': 'full.example.net' });
      const running = postFrom('127.0.0.30', own.url, chat, headers('fill-running'));
      await eventually(() => own.profile.calls.includes('fill-running'), 'the first look-up to run');
      const waiting = ['127.0.0.30', '127.0.0.30', '127.0.0.30', '127.0.0.31'].map((from, i) => postFrom(from, own.url, chat, headers(`fill-waiting-${i}`)));
      await eventually(async () => (await readMetrics(own.url)).get('relay_session_lookups_waiting') === 4, 'the queue to be full');
      // The address with the most waiting gains nothing by sending more: the queue is full for it.
      const more = await postFrom('127.0.0.30', own.url, chat, headers('fill-more'));
      expect(more.body['error']).toBe('profile_api_busy');
      expect((await readMetrics(own.url)).get('relay_session_lookups_refused_total{reason="queue_full"}')).toBe(1);
      const player = own.player();
      const answer = postFrom('127.0.0.32', own.url, chat, own.headers(player, key, 'full.example.net'));
      // The flooder with the most waiting loses its newest, at once.
      const displaced = await waiting[2]!;
      expect(displaced.status).toBe(503);
      expect(displaced.body).toEqual({ error: 'profile_api_busy', message: expect.any(String) });
      expect(Number(displaced.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      own.profile.setMode('normal');
      expect((await answer).status).toBe(200);
      await Promise.all([running, ...waiting]);
      expect((await readMetrics(own.url)).get('relay_session_lookups_refused_total{reason="displaced"}')).toBe(1);
      expect(own.server.core.bans.list()).toEqual([]);
    } finally {
      await own.close();
    }
  });
});

describe('a session check that queued almost to its deadline', () => {
  // Guards: it was started with a few ms left, timed out, and logged "profile API unreachable: no
  // answer within 9.39 ms" about an API that was merely busy.
  it('is answered 503 profile_api_busy without calling the profile API', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, env: { PROFILE_API_CONCURRENCY: '1', PROFILE_API_TIMEOUT: '3s' } });
    try {
      // The first look-up holds the only place until its own deadline, just before the second's.
      own.profile.setMode('hang');
      const first = postFrom('127.0.0.40', own.url, chat, { authorization: 'Bearer slow-first', 'x-irc-multiplayer-server': 'late.example.net' });
      await eventually(() => own.profile.calls.includes('slow-first'), 'the first look-up to run');
      const second = await postFrom('127.0.0.41', own.url, chat, { authorization: 'Bearer late-second', 'x-irc-multiplayer-server': 'late.example.net' });
      expect(second.status).toBe(503);
      expect(second.body).toEqual({ error: 'profile_api_busy', message: expect.any(String) });
      expect(own.profile.calls).not.toContain('late-second');
      expect((await first).body['error']).toBe('profile_api_unavailable');
      expect((await readMetrics(own.url)).get('relay_session_lookups_refused_total{reason="no_time_left"}')).toBe(1);
    } finally {
      own.profile.setMode('normal');
      await own.close();
    }
  });
});
