// The order of checks (DESIGN.md section 3, spec A1-A4): every refusal's status and code, and
// whether the account ended up in the relay-bans bucket.
import { banKey } from '../services/core/bans.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BanRecord } from '../schemas/records.js';
import { KeyStore } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { runCli } from './helpers/cli.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { RelayFixture, type Player } from './helpers/relay.js';

let relay: RelayFixture;
let n = 0;
const channel = (): string => `auth-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { PROFILE_API_TIMEOUT: '300ms', PROFILE_NEGATIVE_CACHE_TTL: '1s' } });
});
afterAll(async () => {
  await relay?.close();
});
beforeEach(() => relay.profile.setMode('normal'));

/** Reads the bans bucket itself, not a mirror. */
async function banOf(uuid: string): Promise<BanRecord | null> {
  // The relay's own bans are kept under its service's key (an operator's under the bare uuid).
  const entry = await relay.server.core.nats.buckets.bans.get(banKey(uuid, 'all'));
  return entry !== null && entry.operation === 'PUT' ? entry.json<BanRecord>() : null;
}

async function refusal(headers: Record<string, string>): Promise<{ status: number; error: string; message: string; retryAfter: string | null }> {
  const res = await relay.post({ type: 'chat', message: 'x' }, headers);
  return { status: res.status, error: String(res.body['error']), message: String(res.body['message']), retryAfter: res.headers.get('retry-after') };
}

describe('requests without a session', () => {
  it('are refused with 401 unauthorized and ban nobody', async () => {
    const key = await relay.createKey();
    const r = await refusal(relay.headers(null, key, channel()));
    expect(r).toMatchObject({ status: 401, error: 'unauthorized' });
    expect(r.message).toMatch(/Authorization: Bearer/);
  });

  it('with a malformed Authorization header are refused with 401 invalid_session', async () => {
    const key = await relay.createKey();
    const r = await refusal({ ...relay.headers(null, key, channel()), authorization: 'Basic dXNlcjpwYXNz' });
    expect(r).toMatchObject({ status: 401, error: 'invalid_session' });
  });

  it('are accepted from a bridge key (irc.connection.unauthenticated) for streams and envelopes', async () => {
    const bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
    const ch = channel();
    const s = await relay.connect(relay.headers(null, bridge, ch));
    const user = relay.player();
    const res = await relay.post([{ user: user.uuid, agent: 'discord-bridge/2.0', message: { type: 'chat', message: 'from discord' } }], relay.headers(null, bridge, ch));
    expect(res.body).toEqual({ accepted: 1, dropped: 0 });
    expect((await s.nextPair()).meta).toEqual({ uuid: user.uuid, agent: 'discord-bridge/2.0', channel: ch });
  });
});

describe('the session check', () => {
  it('refuses a token the profile API does not know with 401 invalid_session, without a ban', async () => {
    const key = await relay.createKey();
    const r = await refusal({ ...relay.headers(null, key, channel()), authorization: 'Bearer not-a-session' });
    expect(r).toMatchObject({ status: 401, error: 'invalid_session' });
  });

  it.each([
    ['down', 'answering 503'],
    ['hang', 'not answering within PROFILE_API_TIMEOUT'],
    ['garbage', 'answering 200 with a broken body'],
  ] as const)('answers 503 with Retry-After and bans nobody when the profile API is %s (%s)', async (mode, _how) => {
    const key = await relay.createKey();
    const p = relay.player();
    relay.profile.setMode(mode);
    // Wrong credentials too: a cracked client must not be banned on a session nobody could verify.
    const r = await refusal({ ...relay.headers(p, key, channel()), 'client-secret': 'wrong' });
    expect(r).toMatchObject({ status: 503, error: 'profile_api_unavailable' });
    expect(Number(r.retryAfter)).toBeGreaterThan(0);
    expect(await banOf(p.uuid)).toBeNull();
  });

  // Its own relay: a 429 makes the relay hold back every look-up for the Retry-After it was given.
  it('answers 503 with Retry-After and bans nobody when the profile API is rate-limited (answering 429)', async () => {
    const own = await RelayFixture.start({ nats: relay.nats });
    try {
      const key = await own.createKey();
      const p = own.player();
      own.profile.setMode('rate-limited');
      const res = await own.post({ type: 'chat', message: 'x' }, { ...own.headers(p, key, channel()), 'client-secret': 'wrong' });
      expect(res.status).toBe(503);
      expect(res.body['error']).toBe('profile_api_unavailable');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(own.server.core.bans.list()).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('caches sessions: many requests with one token make one profile API call, concurrent first requests share it', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const ch = channel();
    const before = relay.profile.calls.filter((t) => t === p.token).length;
    const results = await Promise.all(Array.from({ length: 10 }, () => relay.post({ type: 'chat', message: 'x' }, relay.headers(p, key, ch))));
    for (const r of results) expect(r.status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await relay.post({ type: 'chat', message: 'y' }, relay.headers(p, key, ch))).status).toBe(200);
    expect(relay.profile.calls.filter((t) => t === p.token).length - before).toBe(1);
  });
});

describe('cracked clients (valid session, missing or wrong client credentials)', () => {
  async function expectBanned(p: Player, headers: Record<string, string>, reason: RegExp): Promise<BanRecord> {
    const r = await refusal(headers);
    expect(r).toMatchObject({ status: 403, error: 'banned' });
    const ban = await banOf(p.uuid);
    expect(ban).not.toBeNull();
    expect(ban!.reason).toMatch(reason);
    return ban!;
  }

  it('without credentials: banned', async () => {
    const p = relay.player();
    const ban = await expectBanned(p, relay.headers(p, null, channel()), /missing client credentials/);
    expect(ban.userAgent).toBe('testmod/1.0.0+0123456789abcdef0123456789abcdef01234567');
  });

  it('with an unknown client id: banned, and the id tried is recorded', async () => {
    const p = relay.player();
    const ban = await expectBanned(p, { ...relay.headers(p, null, channel()), 'client-id': 'made-up', 'client-secret': 'x' }, /unknown client id/);
    expect(ban.clientId).toBe('made-up');
  });

  it('with a wrong secret: banned; the right secret afterwards is still refused as banned; relay bans remove lifts it', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const ch = channel();
    await expectBanned(p, { ...relay.headers(p, key, ch), 'client-secret': 'wrong-secret' }, /wrong client secret/);
    expect(await refusal(relay.headers(p, key, ch))).toMatchObject({ status: 403, error: 'banned' });
    const s = await relay.open(relay.headers(p, key, ch));
    expect((await s.refusal()).body.error).toBe('banned');
    const lifted = await runCli(['bans', 'remove', p.uuid], { NATS_URL: relay.nats.url });
    expect(lifted.code).toBe(0);
    expect(await banOf(p.uuid)).toBeNull();
    // The lift reaches the relay's mirror within moments.
    await eventually(async () => (await relay.post({ type: 'chat', message: 'back' }, relay.headers(p, key, ch))).status === 200, 'the lifted ban to reach the relay');
  });
});

describe('keys and scopes (refused plainly, never banned)', () => {
  it('a key used the moment it is created is accepted, not taken for a cracked client', async () => {
    for (let i = 0; i < 10; i++) {
      const key = await relay.createKey();
      const p = relay.player();
      const res = await relay.post({ type: 'chat', message: 'brand new key' }, relay.headers(p, key, channel()));
      expect(res.status).toBe(200);
      expect(await banOf(p.uuid)).toBeNull();
    }
  });

  it('a node whose mirror has not seen a new key yet reads the bucket before calling the id unknown', async () => {
    const { js, buckets } = relay.server.core.nats;
    // A second store on the same bucket whose mirror never started: the node that lags behind.
    const lagging = new KeyStore(js, buckets.keys, relay.server.core.logger);
    const key = await relay.createKey();
    expect(lagging.check(key.clientId, key.clientSecret).status).toBe('unknown');
    expect((await lagging.checkFresh(key.clientId, key.clientSecret)).status).toBe('ok');
    expect((await lagging.checkFresh(key.clientId, 'wrong')).status).toBe('wrong_secret');
    expect((await lagging.checkFresh('relay_000000000000000000000000', 'x')).status).toBe('unknown');
  });

  it('a key a lagging node has read from the bucket is known there from then on, without another read', async () => {
    const { js, buckets } = relay.server.core.nats;
    const lagging = new KeyStore(js, buckets.keys, relay.server.core.logger);
    const key = await relay.createKey();
    expect((await lagging.checkFresh(key.clientId, key.clientSecret)).status).toBe('ok');
    // The local check reads nothing: with regions, what a region cut off from the home region still answers.
    expect(lagging.check(key.clientId, key.clientSecret).status).toBe('ok');
    expect(lagging.check(key.clientId, 'wrong').status).toBe('wrong_secret');
  });

  it('an expired key gets 403 key_expired', async () => {
    const key = await relay.createKey(undefined, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    const p = relay.player();
    expect(await refusal(relay.headers(p, key, channel()))).toMatchObject({ status: 403, error: 'key_expired' });
    expect(await banOf(p.uuid)).toBeNull();
  });

  it('a revoked key gets 403 key_revoked', async () => {
    const key = await relay.createKey();
    await relay.server.core.keys.revoke(key.clientId);
    const p = relay.player();
    const r = await eventually(async () => {
      const x = await refusal(relay.headers(p, key, channel()));
      return x.error === 'key_revoked' && x;
    }, 'the revocation to reach the relay');
    expect(r).toMatchObject({ status: 403, error: 'key_revoked' });
    expect(await banOf(p.uuid)).toBeNull();
  });

  it('a key without irc.connection.establish cannot open a stream: 403 missing_scope', async () => {
    const key = await relay.createKey([Scope.Send, Scope.Receive]);
    const p = relay.player();
    const s = await relay.open(relay.headers(p, key, channel()));
    const r = await s.refusal();
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('missing_scope');
    expect(r.body['scope']).toBe('irc.connection.establish');
    expect(await banOf(p.uuid)).toBeNull();
  });
});

describe('credential header spellings', () => {
  it.each(['Client', 'X-Client', 'Service-Client', 'X-Service-Client'])('%s-ID / %s-Secret are accepted', async (prefix) => {
    const key = await relay.createKey();
    const p = relay.player();
    const headers = relay.headers(p, null, channel(), { [`${prefix}-ID`]: key.clientId, [`${prefix}-Secret`]: key.clientSecret });
    expect((await relay.post({ type: 'chat', message: 'x' }, headers)).status).toBe(200);
  });

  it('X-Hackware-Client-ID is accepted only when CLIENT_HEADER_PREFIXES names it; otherwise the player is banned', async () => {
    const withPrefix = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { CLIENT_HEADER_PREFIXES: 'X-Hackware' } });
    try {
      const key = await withPrefix.createKey();
      const accepted = relay.player();
      const h = (p: Player): Record<string, string> =>
        relay.headers(p, null, channel(), { 'X-Hackware-Client-ID': key.clientId, 'X-Hackware-Client-Secret': key.clientSecret });
      expect((await withPrefix.post({ type: 'chat', message: 'x' }, h(accepted))).status).toBe(200);
      const refused = relay.player();
      expect(await refusal(h(refused))).toMatchObject({ status: 403, error: 'banned' });
    } finally {
      await withPrefix.close();
    }
  });
});
