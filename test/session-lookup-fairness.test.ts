// Fairness of session look-ups under floods, decided by what an attacker cannot copy (DESIGN.md
// section 6): the client address (behind TRUSTED_PROXIES), never the client credentials, which every
// copy of a mod carries. Real relay, real profile API server, real sockets from distinct loopback
// addresses (127.0.0.2 and up).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BEARER_TOKEN_CHARS } from '../services/core/bearer-token.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { postFrom, type PostResult } from './helpers/clients.js';
import { readMetrics } from './helpers/metrics.js';
import { proxyAvailable, startHaproxy, startNginx } from './helpers/proxy.js';
import { RelayFixture } from './helpers/relay.js';
import { openStream } from './helpers/sse-client.js';

const FLOODER = '127.0.0.2';
const PLAYER = '127.0.0.3';
const chat = { type: 'chat', message: 'hello' };

let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start({ env: { PROFILE_API_PER_ADDRESS: '1' } });
});
afterAll(async () => {
  await relay?.close();
});

/** Starts a POST whose session look-up the profile API holds (mode hang) and waits until it is asked. */
async function held(r: RelayFixture, from: string, token: string, baseUrl = r.url, extra: Record<string, string> = {}): Promise<{ answer: Promise<PostResult> }> {
  const answer = postFrom(from, baseUrl, chat, { authorization: `Bearer ${token}`, 'x-irc-multiplayer-server': 'held.example.net', ...extra });
  await eventually(() => r.profile.calls.includes(token), `the relay to ask about ${token}`);
  // Wrapped: an async function returning the promise itself would wait for it.
  return { answer };
}

describe('a flood of junk tokens with the public client credentials', () => {
  // Guards: a flood with a mod's built-in (public) id and secret took the places kept for "valid
  // credentials", and a real player's first request got 503 profile_api_busy at once.
  it("does not refuse a player's first request from another address; the flood is throttled with 429 too_many_session_checks", async () => {
    const own = await RelayFixture.start({ nats: relay.nats, env: { PROFILE_API_CONCURRENCY: '16', PROFILE_API_MAX_QUEUE: '20' } });
    try {
      const key = await own.createKey();
      own.profile.setDelay(300);
      const ch = 'flooded.example.net';
      let busy = 0;
      const flood = Array.from({ length: 120 }, (_, i) =>
        postFrom(FLOODER, own.url, chat, { ...own.headers(null, key, ch), authorization: `Bearer junk-${i}` }).then((r) => {
          if (r.status === 429) busy++;
          return r;
        }),
      );
      // The flood has taken all it can: the rest of it is being refused.
      await eventually(() => busy > 0, 'the flood to fill what it may');
      const player = own.player();
      const post = await postFrom(PLAYER, own.url, chat, own.headers(player, key, ch));
      expect(post.status).toBe(200);
      // The stream side reads the address the same way.
      const stream = await openStream(own.url, { localAddress: '127.0.0.4', headers: own.headers(own.player(), key, ch) });
      expect(stream.status).toBe(200);
      stream.close();
      const results = await Promise.all(flood);
      for (const r of results.filter((x) => x.status === 429)) {
        expect(r.body['error']).toBe('too_many_session_checks');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      for (const r of results.filter((x) => x.status !== 429)) expect(r.body['error']).toBe('invalid_session');
      expect(own.server.core.bans.list()).toEqual([]);
      expect((await readMetrics(own.url)).get('relay_session_lookups_refused_total{reason="address_busy"}')).toBeGreaterThan(0);
    } finally {
      own.profile.setDelay(0);
      await own.close();
    }
  });
});

describe('the client address', () => {
  // Guards: a client writing its own X-Forwarded-For must not become many addresses (and take many shares).
  it('is the socket peer when nobody is trusted: a spoofed X-Forwarded-For changes nothing', async () => {
    relay.profile.setMode('hang');
    try {
      const first = await held(relay, FLOODER, 'spoof-a', relay.url, { 'x-forwarded-for': '10.0.0.1' });
      const spoofed = await postFrom(FLOODER, relay.url, chat, { authorization: 'Bearer spoof-b', 'x-forwarded-for': '10.0.0.2', 'x-irc-multiplayer-server': 'x.example.net' });
      expect(spoofed.status).toBe(429);
      expect(spoofed.body['error']).toBe('too_many_session_checks');
      const stream = await openStream(relay.url, { localAddress: FLOODER, headers: { authorization: 'Bearer spoof-c', 'x-forwarded-for': '10.0.0.3', 'x-irc-multiplayer-server': 'x.example.net' } });
      expect((await stream.refusal()).body.error).toBe('too_many_session_checks');
      expect(relay.profile.calls).not.toContain('spoof-b');
      expect(relay.profile.calls).not.toContain('spoof-c');
      // Another address has its own share.
      const other = await held(relay, PLAYER, 'spoof-d');
      relay.profile.setMode('normal');
      expect((await first.answer).status).toBe(503);
      expect((await other.answer).status).toBe(503);
    } finally {
      relay.profile.setMode('normal');
    }
  });

  // Guards: behind a proxy left out of TRUSTED_PROXIES every player shares the proxy's one address,
  // and nothing said so. At most once per 10 minutes (not once per process, which the first stranger
  // sending X-Forwarded-For used up): test/unit/unnamed-proxy-warning.test.ts moves the clock.
  it('warns, once per 10 minutes, when X-Forwarded-For arrives from a peer TRUSTED_PROXIES does not name', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, profile: relay.profile });
    try {
      const warnings = (): number => own.logs.lines.filter((l) => l.includes('TRUSTED_PROXIES does not name')).length;
      await postFrom(PLAYER, own.url, chat, { authorization: 'Bearer plain', 'x-irc-multiplayer-server': 'x.example.net' });
      expect(warnings()).toBe(0);
      for (const n of [1, 2, 3]) {
        await postFrom(PLAYER, own.url, chat, { authorization: `Bearer fwd-${n}`, 'x-forwarded-for': `10.0.0.${n}`, 'x-irc-multiplayer-server': 'x.example.net' });
      }
      expect(warnings()).toBe(1);
    } finally {
      await own.close();
    }
  });

  describe.each([
    ['nginx', startNginx],
    ['haproxy', startHaproxy],
  ] as const)('behind %s named in TRUSTED_PROXIES', (kind, start) => {
    // Guards: behind a proxy every player looked like the proxy; and a client must not spoof past it.
    it("is the proxy's X-Forwarded-For, read from the right, so a client cannot spoof it", async () => {
      if (!proxyAvailable(kind)) throw new Error(`${kind} is not installed: apt-get install -y ${kind === 'nginx' ? 'nginx-light' : 'haproxy'} (.ci/run does this)`);
      const own = await RelayFixture.start({ nats: relay.nats, env: { PROFILE_API_PER_ADDRESS: '1', TRUSTED_PROXIES: '127.0.0.1' } });
      const proxy = await start([own.server.port], [own.server.port]);
      own.profile.setMode('hang');
      try {
        const first = await held(own, FLOODER, `${kind}-a`, proxy.url);
        // Written by the client: the proxy appends the real peer after it, and that is what counts.
        const spoofed = await postFrom(FLOODER, proxy.url, chat, { authorization: `Bearer ${kind}-b`, 'x-forwarded-for': '127.0.0.9', 'x-irc-multiplayer-server': 'x.example.net' });
        expect(spoofed.status).toBe(429);
        expect(spoofed.body['error']).toBe('too_many_session_checks');
        const stream = await openStream(proxy.url, { localAddress: FLOODER, headers: { authorization: `Bearer ${kind}-c`, 'x-irc-multiplayer-server': 'x.example.net' } });
        expect((await stream.refusal()).body.error).toBe('too_many_session_checks');
        expect(own.profile.calls).toEqual([`${kind}-a`]);
        // Another player behind the same proxy is another address.
        const other = await held(own, PLAYER, `${kind}-d`, proxy.url);
        own.profile.setMode('normal');
        expect((await first.answer).status).toBe(503);
        expect((await other.answer).status).toBe(503);
      } finally {
        own.profile.setMode('normal');
        await proxy.stop();
        await own.close();
      }
    });
  });
});

describe('what cannot be a session token', () => {
  // Guards: padding and junk each cost a profile API call (and a place in the queue).
  it('is refused 401 invalid_session without asking the profile API, and bans nobody', async () => {
    const key = await relay.createKey();
    const before = relay.profile.calls.length;
    const tooLong = 'a'.repeat(MAX_BEARER_TOKEN_CHARS + 1);
    const junk = [tooLong, 'abc$def', 'tok"en', 'a=b', 'x*y'];
    for (const token of junk) {
      for (const credentials of [key, null]) {
        const r = await postFrom(FLOODER, relay.url, chat, { ...relay.headers(null, credentials, 'shape.example.net'), authorization: `Bearer ${token}` });
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ error: 'invalid_session', message: expect.any(String) });
        expect(JSON.stringify(r.body)).not.toContain(token);
      }
    }
    const stream = await openStream(relay.url, { headers: { ...relay.headers(null, key, 'shape.example.net'), authorization: `Bearer ${tooLong}` } });
    expect((await stream.refusal()).body.error).toBe('invalid_session');
    expect(relay.profile.calls.length).toBe(before);
    expect(relay.server.core.bans.list()).toEqual([]);
    const metrics = await readMetrics(relay.url);
    expect(metrics.get('relay_session_lookups_refused_total{reason="token_too_long"}')).toBe(3);
    expect(metrics.get('relay_session_lookups_refused_total{reason="token_malformed"}')).toBe(8);
    // At the bound, in the alphabet (padding included): a token like any other, looked up.
    const longest = `${'A'.repeat(MAX_BEARER_TOKEN_CHARS - 2)}==`;
    const r = await postFrom(FLOODER, relay.url, chat, { ...relay.headers(null, key, 'shape.example.net'), authorization: `Bearer ${longest}` });
    expect(r.status).toBe(401);
    expect(relay.profile.calls.at(-1)).toBe(longest);
  });

  it('offline mode (development) still accepts Bearer offline:<name>', async () => {
    const offline = await RelayFixture.start({ nats: relay.nats, env: { PROFILE_API_URL: 'offline', NODE_ENV: 'development' } });
    try {
      const key = await offline.createKey();
      const r = await offline.post(chat, { ...offline.headers(null, key, 'offline.example.net'), authorization: 'Bearer offline:Steve' });
      expect(r.status).toBe(200);
    } finally {
      await offline.close();
    }
  });
});

describe('a token the profile API refused', () => {
  // Guards: repeating a refused token must cost nothing: no look-up, and no place in the gate (a
  // flooder whose share is full still hears 401 for it, not 503).
  it('repeated, costs no further look-up and no place in the gate', async () => {
    const refused = await postFrom(FLOODER, relay.url, chat, { authorization: 'Bearer refused-once', 'x-irc-multiplayer-server': 'x.example.net' });
    expect(refused.status).toBe(401);
    relay.profile.setMode('hang');
    try {
      const holding = await held(relay, FLOODER, 'holding-the-share');
      for (let i = 0; i < 3; i++) {
        const again = await postFrom(FLOODER, relay.url, chat, { authorization: 'Bearer refused-once', 'x-irc-multiplayer-server': 'x.example.net' });
        expect(again.status).toBe(401);
        expect(again.body['error']).toBe('invalid_session');
      }
      expect(relay.profile.calls.filter((t) => t === 'refused-once')).toHaveLength(1);
      relay.profile.setMode('normal');
      await holding.answer;
    } finally {
      relay.profile.setMode('normal');
    }
    expect((await readMetrics(relay.url)).get('relay_session_lookups_refused_total{reason="remembered_invalid"}')).toBeGreaterThanOrEqual(3);
  });
});
