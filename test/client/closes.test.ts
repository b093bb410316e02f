// Final closes and refusals end the client in state `closed` with the relay's reason, and nothing more
// is asked of the relay; a 401 costs one token refresh and one retry; options the relay would punish
// with a ban are refused before any request.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, RelayError, type RelayClientOptions } from '../../clients/typescript/src/index.js';
import type { CreatedKey } from '../../services/core/keys.js';
import { Scope } from '../../services/core/scopes.js';
import { readMetrics } from '../helpers/metrics.js';
import { CLIENT_AGENT, Recorder, TestTransport } from '../helpers/relay-client.js';
import { RelayFixture, type Player } from '../helpers/relay.js';

let relay: RelayFixture;
let n = 0;
const channel = (): string => `client-close-${++n}.example.net`;
const clients: RelayClient[] = [];

// Short back-off, so a client that wrongly tried again would do so many times within QUIET_MS.
const BACKOFF = { baseMs: 50, capMs: 100 };
const QUIET_MS = 400;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await relay?.close();
});

interface Made {
  client: RelayClient;
  rec: Recorder;
  transport: TestTransport;
  tokensAsked: () => number;
}

function make(key: CreatedKey, token: (() => string) | null, server: string, extra: Partial<RelayClientOptions> = {}): Made {
  const transport = new TestTransport();
  let asked = 0;
  const client = new RelayClient({
    url: relay.url,
    server,
    clientId: key.clientId,
    clientSecret: key.clientSecret,
    userAgent: CLIENT_AGENT,
    backoff: BACKOFF,
    fetch: transport.fetch,
    ...(token === null
      ? {}
      : {
          token: () => {
            asked++;
            return token();
          },
        }),
    ...extra,
  });
  clients.push(client);
  return { client, rec: new Recorder(client), transport, tokensAsked: () => asked };
}

const session = (p: Player) => (): string => p.token;

/** Proves an absence (no request): a window many back-off caps long, since no event can announce it. */
async function quiet(): Promise<void> {
  await new Promise((r) => setTimeout(r, QUIET_MS));
}

async function opensAndRefusals(): Promise<{ opened: number; refused: number }> {
  const m = await readMetrics(relay.url);
  let refused = 0;
  for (const [k, v] of m) if (k.startsWith('relay_refusals_total')) refused += v;
  return { opened: m.get('relay_streams_opened_total') ?? 0, refused };
}

describe('RelayClient final closes', () => {
  it.each([
    ['banned', async (p: Player) => void (await relay.server.core.bans.ban(p.uuid, { reason: 'test', by: 'client test' }))],
    ['key_revoked', async (_p: Player, k: CreatedKey) => void (await relay.server.core.keys.revoke(k.clientId))],
  ] as const)('%s while open: state closed with that reason, and no further request', async (reason, act) => {
    const key = await relay.createKey();
    const player = relay.player();
    const { client, rec, transport } = make(key, session(player), channel());
    await client.connect();
    const before = await opensAndRefusals();
    await act(player, key);
    const closed = await rec.state('closed');
    expect(closed).toMatchObject({ state: 'closed', reason, error: { code: reason } });
    expect(closed.message).toMatch(reason === 'banned' ? /banned/ : /revoked/);
    await quiet();
    expect(transport.requests).toHaveLength(1);
    expect(await opensAndRefusals()).toEqual(before);
    expect(rec.names()).toEqual(['connecting', 'open', 'closed']);
  });

  it('key_expired at the key’s expiry: closed with that reason, and no further request', async () => {
    const key = await relay.createKey(undefined, { expiresAt: new Date(Date.now() + 1500).toISOString() });
    const { client, rec, transport } = make(key, session(relay.player()), channel());
    await client.connect();
    const closed = await rec.state('closed', 'the expiry', 10_000);
    expect(closed.reason).toBe('key_expired');
    await quiet();
    expect(transport.requests).toHaveLength(1);
  });

  it.each([
    ['403 missing_scope (no irc.connection.establish)', 'missing_scope', async () => relay.createKey([Scope.Send, Scope.Receive]), false],
    ['403 banned (an account banned before)', 'banned', async () => relay.createKey(), true],
  ] as const)('%s at open: connect() rejects, state closed with the code, one request only', async (_name, code, keyFor, ban) => {
    const key = await keyFor();
    const player = relay.player();
    if (ban) await relay.server.core.bans.ban(player.uuid, { reason: 'test', by: 'client test' });
    const { client, rec, transport } = make(key, session(player), channel());
    const before = await opensAndRefusals();
    const err = await client.connect().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RelayError);
    expect(err).toMatchObject({ code, status: 403 });
    expect(client.state).toMatchObject({ state: 'closed', reason: code });
    await quiet();
    expect(transport.requests).toHaveLength(1);
    expect(await opensAndRefusals()).toEqual({ opened: before.opened, refused: before.refused + 1 });
    expect(rec.names()).toEqual(['connecting', 'closed']);
  });
});

describe('RelayClient and 401', () => {
  it('asks token() once more and retries once: a refreshed session opens', async () => {
    const key = await relay.createKey();
    const player = relay.player();
    let calls = 0;
    const { client, transport, tokensAsked } = make(key, () => (++calls === 1 ? 'expired-game-token' : player.token), channel());
    await client.connect();
    expect(tokensAsked()).toBe(2);
    expect(transport.gets.map((g) => g.headers['authorization'])).toEqual(['Bearer expired-game-token', `Bearer ${player.token}`]);
  });

  it('a second 401 ends in closed (invalid_session) after exactly two requests', async () => {
    const key = await relay.createKey();
    const { client, rec, transport, tokensAsked } = make(key, () => `never-valid-${tokensAsked()}`, channel());
    await expect(client.connect()).rejects.toMatchObject({ code: 'invalid_session', status: 401 });
    expect(rec.closed()).toMatchObject({ reason: 'invalid_session' });
    await quiet();
    expect(tokensAsked()).toBe(2);
    expect(transport.requests).toHaveLength(2);
  });

  it('send: a 401 refreshes the token once and resends; a second 401 throws invalid_session', async () => {
    const key = await relay.createKey();
    const player = relay.player();
    let calls = 0;
    const good = make(key, () => (++calls === 1 ? 'expired-game-token' : player.token), channel());
    expect(await good.client.send({ type: 'chat', message: 'after refresh' })).toEqual({ accepted: 1, dropped: 0 });
    expect(good.tokensAsked()).toBe(2);
    expect(good.transport.posts).toHaveLength(2);
    // One batch, one key: the resend is the same request.
    expect(good.transport.posts[1]!.headers['idempotency-key']).toBe(good.transport.posts[0]!.headers['idempotency-key']);

    const bad = make(key, () => 'never-valid', channel());
    await expect(bad.client.send({ type: 'chat', message: 'x' })).rejects.toMatchObject({ code: 'invalid_session', status: 401 });
    expect(bad.tokensAsked()).toBe(2);
    expect(bad.transport.posts).toHaveLength(2);
  });
});

describe('RelayClient misconfiguration', () => {
  it.each([
    ['no client secret', { clientSecret: '' }],
    ['the literal "undefined" a build leaves for an unset secret', { clientSecret: 'undefined' }],
    ['no client id', { clientId: '   ' }],
  ] as const)('%s with a session: refused locally, before any request (the relay would ban the account)', async (_name, bad) => {
    const key = await relay.createKey();
    const player = relay.player();
    const transport = new TestTransport();
    const profileCalls = relay.profile.calls.length;
    let asked = 0;
    let thrown: unknown = null;
    try {
      new RelayClient({
        url: relay.url,
        server: channel(),
        clientId: key.clientId,
        clientSecret: key.clientSecret,
        userAgent: CLIENT_AGENT,
        token: () => {
          asked++;
          return player.token;
        },
        fetch: transport.fetch,
        ...bad,
      });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(RelayError);
    expect(thrown).toMatchObject({ code: 'misconfigured', message: expect.stringMatching(/bans an account/) });
    expect(transport.requests).toHaveLength(0);
    expect(asked).toBe(0);
    expect(relay.profile.calls.length).toBe(profileCalls);
    expect(relay.server.core.bans.activeBan(player.uuid)).toBeUndefined();
  });

  it('a game client without a server is refused locally too (the relay would answer 400)', () => {
    expect(() => new RelayClient({ url: relay.url, clientId: 'a', clientSecret: 'b', userAgent: CLIENT_AGENT, token: () => 't' })).toThrow(/server is required/);
  });
});
