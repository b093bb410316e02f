// The admin service (`relay serve admin`): its API refuses anyone without an admin token, shows the
// mesh as it is (nodes, channels, streams), manages keys and bans with an audit record naming the
// operator, and replays and tails a channel, against a real relay and nats-server.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { ADMIN_ROUTES } from '../schemas/admin-openapi.js';
import { LogEntry } from '../schemas/log-entry.js';
import { loadConfig } from '../services/core/config.js';
import { AUDIT_STREAM_NAME, STREAM_NAME } from '../services/core/subjects.js';
import { waitUntil } from '../tools/poll.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { runCliJson } from './helpers/cli.js';
import { freeze } from './helpers/nats.js';
import { setUpNats } from './helpers/nats-setup.js';
import { RelayFixture } from './helpers/relay.js';
import { validPayloads } from './helpers/payloads.js';
import { openStream } from './helpers/sse-client.js';

const SAMPLES = validPayloads();

const CHANNEL = 'play.example.net';
let relay: RelayFixture;
let admin: AdminFixture;

beforeAll(async () => {
  relay = await RelayFixture.start();
  // Five operators: the live-tail limits are per operator and per service.
  admin = await startAdmin(relay.nats, ['alice', 'bob', 'carol', 'dave', 'erin']);
});

afterAll(async () => {
  await admin?.close();
  await relay?.close();
});

type Json = Record<string, unknown>;
const asList = (body: unknown): Json[] => body as Json[];

/** A concrete URL for a route pattern (/api/bans/:uuid). */
function concrete(path: string): string {
  return path.replace(':channel', CHANNEL).replace(':clientId', 'relay_000000000000000000000000').replace(':uuid', '069a79f4-44e9-4726-a5be-fca90e38aaf5');
}

describe('admin API authentication', () => {
  it('every route refuses a request without a token (401 admin_token_required) or with a wrong one (401 admin_token_invalid), and changes nothing', async () => {
    const routes = admin.server.apiRoutes;
    expect(routes.length).toBeGreaterThanOrEqual(14);
    const bansBefore = await admin.call('/api/bans');
    const keysBefore = await admin.call('/api/keys');
    const wrong = admin.tokens['alice']!.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      const body = method === 'POST' ? { scopes: ['irc.messages.send'], uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5', reason: 'x' } : undefined;
      const without = await admin.call(concrete(path), { method, body, token: null });
      expect([route, without.status, without.body]).toEqual([route, 401, { error: 'admin_token_required', message: expect.any(String) }]);
      for (const token of [wrong, 'short', `${admin.tokens['alice']!}x`]) {
        const bad = await admin.call(concrete(path), { method, body, token });
        expect([route, bad.status, (bad.body as Json)['error']]).toEqual([route, 401, 'admin_token_invalid']);
      }
      // A token in a cookie or the query string carries no authority.
      const cookie = await admin.call(`${concrete(path)}?token=${admin.tokens['alice']!}`, { method, body, token: null, headers: { cookie: `token=${admin.tokens['alice']!}` } });
      expect([route, cookie.status]).toEqual([route, 401]);
    }
    expect((await admin.call('/api/bans')).body).toEqual(bansBefore.body);
    expect((await admin.call('/api/keys')).body).toEqual(keysBefore.body);
  });

  it('the routes it serves are the routes the OpenAPI document describes', () => {
    const documented = ADMIN_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path.replace(/\{(\w+)\}/g, ':$1')}`).sort();
    expect([...admin.server.apiRoutes].sort()).toEqual(documented);
  });

  it('each named token signs in as its own operator, and no token appears in the log', async () => {
    expect((await admin.call('/api/session', { as: 'alice' })).body).toMatchObject({ name: 'alice' });
    expect((await admin.call('/api/session', { as: 'bob' })).body).toMatchObject({ name: 'bob' });
    for (const token of Object.values(admin.tokens)) expect(admin.logs.text).not.toContain(token);
  });

  it('answers carry the headers a browser console needs: CSP without inline script, no framing, no-store on the API, no cookie', async () => {
    const api = await admin.call('/api/session');
    expect(api.headers.get('cache-control')).toBe('no-store');
    const csp = api.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(api.headers.get('x-frame-options')).toBe('DENY');
    expect(api.headers.get('set-cookie')).toBeNull();
    const refused = await admin.call('/api/session', { token: null });
    expect(refused.headers.get('cache-control')).toBe('no-store');
    // Operational probe without a token, for the orchestrator.
    expect((await admin.call('/healthz', { token: null })).status).toBe(200);
  });

  it('refuses to start without a token, or with a short one, saying how to make one', () => {
    expect(() => loadConfig('admin', { NATS_URL: relay.nats.url })).toThrow(/ADMIN_TOKEN.*openssl rand -hex 24/s);
    expect(() => loadConfig('admin', { NATS_URL: relay.nats.url, ADMIN_TOKEN: 'secret' })).toThrow(/ADMIN_TOKEN is shorter than 24 characters/);
    expect(() => loadConfig('admin', { NATS_URL: relay.nats.url, ADMIN_TOKENS: `a=${'x'.repeat(30)},a=${'y'.repeat(30)}` })).toThrow(/Two admin tokens are named "a"/);
  });
});

describe('what the admin API shows', () => {
  it('lists the relay node alive and ready, with its version and the streams it holds', async () => {
    const key = await relay.createKey();
    const alice = relay.player('Alice');
    const stream = await relay.connect(relay.headers(alice, key, CHANNEL));
    const node = await waitUntil(async () => {
      const nodes = asList((await admin.call('/api/nodes')).body);
      const n = nodes.find((x) => x['node'] === relay.server.config.nodeId);
      return n !== undefined && (n['streams'] as number) >= 1 ? n : undefined;
    }, 'the node to report its stream');
    expect(node).toMatchObject({ role: 'all', alive: true, ready: true, version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    stream.close();
  });

  it("shows a channel's streams with account, agent, key label and node, and counts its payloads", async () => {
    const key = await relay.createKey(undefined, { label: 'examplemod 2.1' });
    const bob = relay.player('Bob');
    const stream = await relay.connect(relay.headers(bob, key, 'Streams.Example.NET'));
    const streams = await waitUntil(async () => {
      const list = asList((await admin.call('/api/channels/STREAMS.example.net:25565/streams')).body);
      return list.some((s) => s['uuid'] === bob.uuid) ? list : undefined;
    }, "bob's stream in the channel's streams");
    expect(streams.find((s) => s['uuid'] === bob.uuid)).toMatchObject({
      channel: 'streams.example.net',
      agent: expect.stringContaining('testmod/'),
      keyLabel: 'examplemod 2.1',
      clientId: key.clientId,
      node: relay.server.config.nodeId,
    });
    expect((await relay.post({ type: 'chat', message: 'counted' }, relay.headers(bob, key, 'streams.example.net'))).status).toBe(200);
    const channel = await waitUntil(async () => {
      const c = asList((await admin.call('/api/channels')).body).find((x) => x['channel'] === 'streams.example.net');
      return c !== undefined && (c['framesInLastMinute'] as number) >= 1 ? c : undefined;
    }, 'the payload counted on the channel');
    expect(channel).toMatchObject({ streams: 1, lastActivity: expect.any(String) });
    stream.close();
    await waitUntil(async () => asList((await admin.call('/api/channels/streams.example.net/streams')).body).length === 0 || undefined, 'the closed stream gone');
  });
});

describe('keys and bans through the admin API', () => {
  it('creates a key whose secret is shown once and works on the relay, lists it without secret, revokes it, and audits both as the operator', async () => {
    const created = await admin.call('/api/keys', { method: 'POST', as: 'bob', body: { scopes: ['irc.connection.establish', 'irc.messages.send', 'irc.messages.receive'], label: 'console key', expires: '30d' } });
    expect(created.status).toBe(201);
    const key = created.body as { clientId: string; clientSecret: string };
    expect(key.clientSecret.length).toBeGreaterThanOrEqual(32);
    const listed = JSON.stringify((await admin.call('/api/keys')).body);
    expect(listed).toContain(key.clientId);
    expect(listed).not.toContain(key.clientSecret);
    expect(listed).not.toContain('secretSha256');
    const carol = relay.player('Carol');
    const works = await relay.post({ type: 'chat', message: 'with the new key' }, relay.headers(carol, { ...key, scopes: [] }, CHANNEL));
    expect(works.status).toBe(200);

    const revoked = await admin.call(`/api/keys/${key.clientId}/revoke`, { method: 'POST', as: 'bob' });
    expect([revoked.status, (revoked.body as Json)['status']]).toEqual([200, 'revoked']);
    await waitUntil(async () => (await relay.post({ type: 'chat', message: 'after' }, relay.headers(carol, { ...key, scopes: [] }, CHANNEL))).status === 403 || undefined, 'the relay to refuse the revoked key');
    const audit = asList((await admin.call('/api/audit')).body).filter((r) => r['target'] === key.clientId);
    expect(audit.map((r) => [r['action'], r['actor']])).toEqual([
      ['key.create', 'admin-api:bob'],
      ['key.revoke', 'admin-api:bob'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(key.clientSecret);
    expect((await admin.call('/api/keys/relay_ffffffffffffffffffffffff/revoke', { method: 'POST' })).status).toBe(404);
  });

  it("a ban closes the player's open stream and is audited with its reason; lifting it lets the player back", async () => {
    const key = await relay.createKey();
    const dave = relay.player('Dave');
    const stream = await relay.connect(relay.headers(dave, key, CHANNEL));
    const added = await admin.call('/api/bans', { method: 'POST', body: { uuid: dave.uuid.replace(/-/g, '').toUpperCase(), reason: 'spam in chat', expires: '7d' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ uuid: dave.uuid, reason: 'spam in chat', by: 'admin-api:alice', expiresAt: expect.any(String) });
    const closed = await stream.closeEvent();
    expect(closed.reason).toBe('banned');
    expect(asList((await admin.call('/api/bans')).body).some((b) => b['uuid'] === dave.uuid)).toBe(true);

    expect((await admin.call(`/api/bans/${dave.uuid}`, { method: 'DELETE' })).status).toBe(204);
    expect((await admin.call(`/api/bans/${dave.uuid}`, { method: 'DELETE' })).body).toMatchObject({ error: 'not_found' });
    await waitUntil(async () => (await relay.post({ type: 'chat', message: 'back' }, relay.headers(dave, key, CHANNEL))).status === 200 || undefined, 'dave back after the ban is lifted');
    const audit = asList((await admin.call('/api/audit?since=10m')).body).filter((r) => r['target'] === dave.uuid);
    expect(audit.map((r) => [r['action'], r['actor'], r['reason'] ?? null])).toEqual([
      ['ban.add', 'admin-api:alice', 'spam in chat'],
      ['ban.remove', 'admin-api:alice', null],
    ]);
    // The same trail the CLI reads: `relay audit` shows what was done in the console, and by whom.
    const cli = await runCliJson<Json[]>(['audit', '--json', '--since', '10m'], { NATS_URL: relay.nats.url });
    expect(cli.filter((r) => r['target'] === dave.uuid).map((r) => [r['action'], r['actor']])).toEqual([
      ['ban.add', 'admin-api:alice'],
      ['ban.remove', 'admin-api:alice'],
    ]);
  });

  it('refuses malformed input with 400 bad_request and a sentence, storing nothing', async () => {
    const bansBefore = (await admin.call('/api/bans')).body;
    const keysBefore = asList((await admin.call('/api/keys')).body).length;
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', '/api/bans', { uuid: 'not-a-uuid', reason: 'x' }, /not a UUID/],
      ['POST', '/api/bans', { uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5', reason: '   ' }, /reason/],
      ['POST', '/api/bans', { uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5', reason: 'x', expires: 'yesterday' }, /expires must be/],
      ['POST', '/api/bans', { uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5', reason: 'x', admin: true }, /additional properties/],
      ['POST', '/api/bans', '{"uuid":', /malformed/],
      ['POST', '/api/keys', { scopes: ['irc.everything'] }, /Unknown scope/],
      ['POST', '/api/keys', { scopes: [] }, /fewer than 1/],
      ['POST', '/api/keys', { scopes: ['irc.messages.send'], expires: '2001-01-01' }, /in the future/],
      ['GET', '/api/channels/bad%20channel!/streams', undefined, /channel/],
      ['GET', `/api/channels/${CHANNEL}/replay?limit=0`, undefined, /limit must be/],
      ['GET', `/api/channels/${CHANNEL}/replay?since=soon`, undefined, /since must be/],
      ['GET', `/api/channels/${CHANNEL}/replay?since=1h&fromSeq=3`, undefined, /not both/],
      ['GET', `/api/channels/${CHANNEL}/replay?type=chat&type=death`, undefined, /more than once/],
      ['GET', `/api/channels/${CHANNEL}/tail?type=shout`, undefined, /not a payload type/],
      ['GET', '/api/audit?limit=abc', undefined, /limit must be/],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await admin.call(path, { method, body });
      expect([method, path, r.status, (r.body as Json)['error']]).toEqual([method, path, 400, 'bad_request']);
      expect((r.body as Json)['message']).toMatch(message);
    }
    expect((await admin.call('/api/bans')).body).toEqual(bansBefore);
    expect(asList((await admin.call('/api/keys')).body).length).toBe(keysBefore);
  });
});

/** The one log entry shape (schemas/log-entry.ts) the admin API documents and the console reads; no member dropped. */
const checker = new Ajv({ strict: false, allErrors: true });
addFormats.default(checker);
const isLogEntry = checker.compile(LogEntry);

describe('replay and live tail of a channel', () => {
  it('replays stored payloads with the CLI filters, paging with more and nextSeq (nextFrom the same, as text)', async () => {
    const key = await relay.createKey();
    const erin = relay.player('Erin');
    const frank = relay.player('Frank');
    const channel = 'replay.example.net';
    for (const [p, body] of [
      [erin, { type: 'chat', message: 'one' }],
      [frank, { type: 'chat', message: 'two' }],
      [erin, SAMPLES['death']!],
      [erin, { type: 'chat', message: 'three' }],
    ] as const) {
      expect((await relay.post(body, relay.headers(p, key, channel))).status).toBe(200);
    }
    const all = (await admin.call(`/api/channels/${channel}/replay`)).body as { entries: Json[]; more: boolean };
    expect(all.entries.map((e) => (e['data'] as Json)['type'])).toEqual(['chat', 'chat', 'death', 'chat']);
    for (const e of all.entries) expect(isLogEntry(e), JSON.stringify(isLogEntry.errors)).toBe(true);
    const erinChats = (await admin.call(`/api/channels/${channel}/replay?type=chat&sender=${erin.uuid}`)).body as { entries: Json[] };
    expect(erinChats.entries.map((e) => (e['data'] as Json)['message'])).toEqual(['one', 'three']);
    const page = (await admin.call(`/api/channels/${channel}/replay?limit=2`)).body as { entries: Json[]; more: boolean; nextSeq: number; nextFrom: string };
    expect(page.nextFrom).toBe(String(page.nextSeq));
    expect([page.entries.length, page.more]).toEqual([2, true]);
    const rest = (await admin.call(`/api/channels/${channel}/replay?fromSeq=${page.nextSeq}`)).body as { entries: Json[]; more: boolean };
    expect(rest.entries.map((e) => (e['data'] as Json)['type'])).toEqual(['death', 'chat']);
    expect(rest.more).toBe(false);
    expect(((await admin.call(`/api/channels/${channel}/replay?since=1m`)).body as { entries: Json[] }).entries).toHaveLength(4);
    expect(((await admin.call('/api/channels/empty.example.net/replay')).body as { entries: Json[] }).entries).toEqual([]);
  });

  it('tails a channel live as SSE, filtered by type, and forgets the tail when its reader leaves', async () => {
    const key = await relay.createKey();
    const gina = relay.player('Gina');
    const channel = 'tail.example.net';
    const jsm = relay.server.core.nats.jsm;
    const before = (await jsm.streams.info(STREAM_NAME)).state.consumer_count;
    const tail = await openStream(admin.url, { path: `/api/channels/${channel}/tail?type=chat`, headers: { authorization: `Bearer ${admin.tokens['alice']!}` } });
    expect(tail.status).toBe(200);
    expect(tail.headers['content-type']).toMatch(/^text\/event-stream/);
    await tail.waitForComment(/^tail of tail\.example\.net/);
    expect((await relay.post(SAMPLES['death']!, relay.headers(gina, key, channel))).status).toBe(200);
    expect((await relay.post({ type: 'chat', message: 'live!' }, relay.headers(gina, key, channel))).status).toBe(200);
    const event = await tail.nextEvent();
    expect(event.event).toBe('entry');
    const entry = JSON.parse(event.data) as { seq: number; meta: Json; data: Json };
    expect(entry.data).toEqual({ type: 'chat', message: 'live!' });
    expect(isLogEntry(entry), JSON.stringify(isLogEntry.errors)).toBe(true);
    expect(entry.meta).toMatchObject({ uuid: gina.uuid, channel });
    expect(event.id).toBe(String(entry.seq));
    expect((await jsm.streams.info(STREAM_NAME)).state.consumer_count).toBe(before + 1);
    tail.close();
    await waitUntil(async () => (await jsm.streams.info(STREAM_NAME)).state.consumer_count === before || undefined, "the tail's consumer gone after its reader left");
  });
});

// Last in this file: these break the shared NATS on purpose, and mend it after.
describe('when the admin service cannot do all it was asked', () => {
  it('throttles a 17th live tail of one operator with 429 too_many_tails (others still tail), refuses a 65th of the service with 503 tails_busy, both with Retry-After, and takes one again once a tail closes', async () => {
    const auth = (name: string): Record<string, string> => ({ authorization: `Bearer ${admin.tokens[name]!}` });
    const open = (name: string): ReturnType<typeof openStream> => openStream(admin.url, { path: `/api/channels/${CHANNEL}/tail`, headers: auth(name) });
    const tails = await Promise.all(['alice', 'bob', 'carol', 'dave'].flatMap((name) => Array.from({ length: 16 }, () => open(name))));
    try {
      expect(tails.map((t) => t.status)).toEqual(Array(64).fill(200));
      // One token cannot take every place: alice's 17th is hers to close.
      const overShare = await open('alice');
      expect(await overShare.refusal()).toEqual({ status: 429, body: { error: 'too_many_tails', message: expect.stringMatching(/alice already follows 16 .*close one first/) } });
      expect(overShare.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      // Erin is within her share: the service is full, which is no fault of hers.
      const full = await open('erin');
      expect(await full.refusal()).toEqual({ status: 503, body: { error: 'tails_busy', message: expect.stringMatching(/already follows 64 .*close one first/) } });
      expect(full.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      tails.pop()!.close();
      const again = await waitUntil(async () => {
        const t = await open('erin');
        if (t.status === 200) return t;
        t.close();
        return undefined;
      }, 'a tail place free again');
      tails.push(again);
    } finally {
      for (const t of tails) t.close();
    }
  });

  it('a ban whose audit record cannot be written still bans, and says 503 audit_not_recorded: do not repeat it', async () => {
    const jsm = relay.server.core.nats.jsm;
    await jsm.streams.delete(AUDIT_STREAM_NAME);
    try {
      const uuid = relay.player('Hank').uuid;
      const r = await admin.call('/api/bans', { method: 'POST', body: { uuid, reason: 'audit down' } });
      expect([r.status, (r.body as Json)['error']]).toEqual([503, 'audit_not_recorded']);
      expect((r.body as Json)['message']).toMatch(/took effect.*do not repeat it/);
      await waitUntil(async () => asList((await admin.call('/api/bans')).body).some((b) => b['uuid'] === uuid) || undefined, 'the ban in force');
    } finally {
      await setUpNats(relay.nats.url);
    }
  });

  it('answers 503 unavailable with Retry-After when NATS does not answer, and works again once it does', async () => {
    const node = relay.nats.node;
    if (node === undefined) return void expect(relay.nats.via).toBe('testcontainers');
    const thaw = await freeze(node);
    let r: Awaited<ReturnType<AdminFixture['call']>>;
    try {
      r = await admin.call('/api/bans', { method: 'POST', body: { uuid: relay.player('Ivan').uuid, reason: 'nats frozen' } });
    } finally {
      thaw();
    }
    expect([r.status, (r.body as Json)['error'], r.headers.get('retry-after')]).toEqual([503, 'unavailable', '1']);
    await waitUntil(async () => (await admin.call('/api/keys', { method: 'POST', body: { scopes: ['irc.messages.send'] } })).status === 201 || undefined, 'the admin API working again');
  }, 60_000);
});
