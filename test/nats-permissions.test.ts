// NATS over mutual TLS with one user per role (infra/nats/permissions.conf): every service and the
// CLI do their whole work through their own user, without one refused subject (the server logs each
// "Permissions Violation"); and a TLS setting that does not fit the server stops start-up with one
// sentence naming it instead of waiting for ever. What each role may NOT do is
// test/nats-role-permissions.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelayServer } from '../services/server.js';
import { ALL_SCOPES } from '../services/core/scopes.js';
import type { BanRecord } from '../schemas/records.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { startTestNats } from './helpers/nats.js';
import { startProfileApi, type FakeProfileApi } from './helpers/profile-api.js';
import { RelayFixture } from './helpers/relay.js';
import { runCli, runCliJson } from './helpers/cli.js';
import { startRoleNats, type RoleNats } from './helpers/role-nats.js';
import type { CreatedKey } from '../services/core/keys.js';
import { waitUntil } from '../tools/poll.js';

let nats: RoleNats;
let profile: FakeProfileApi;
let admin: AdminFixture;
let ingress: RelayFixture;
let gateway: RelayFixture;
let key: CreatedKey;
const opened: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  nats = await startRoleNats({ tls: true });
  profile = await startProfileApi();
  admin = await startAdmin(nats, ['alice'], nats.env('admin'));
  opened.push(admin);
  ingress = await RelayFixture.start({ service: 'ingress', nats, profile, setup: false, env: { ...nats.env('ingress'), RELAY_NODE_ID: 'ingress-1' } });
  opened.push(ingress);
  // No resume window: a Last-Event-ID resume reads the event log through the gateway's user.
  gateway = await RelayFixture.start({ service: 'gateway', nats, profile, setup: false, env: { ...nats.env('gateway'), RESUME_WINDOW_BYTES: '0', RELAY_NODE_ID: 'gateway-1', NODE_TIMEOUT: '2s' } });
  opened.push(gateway);
  const created = await admin.call('/api/keys', { method: 'POST', body: { scopes: ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated'), label: 'over TLS' } });
  expect(created.status).toBe(201);
  key = created.body as CreatedKey;
}, 120_000);

afterAll(async () => {
  for (const o of opened.reverse()) await o.close().catch(() => undefined);
  await profile?.close();
  await nats?.stop();
});

describe('every role does its work through its own NATS user, over mutual TLS, with nothing refused', () => {
  it('a POST to the ingress is delivered on a gateway stream, resumed from the event log, and read back by the CLI', async () => {
    const channel = 'tls.example.net';
    const listener = gateway.player('Listener');
    // The gateways learn of the key from the keys bucket: the open retries until it is known.
    const stream = await gateway.connect(gateway.headers(listener, key, channel));
    const sender = ingress.player('Sender');
    expect((await ingress.post({ type: 'chat', message: 'over mutual TLS' }, ingress.headers(sender, key, channel, { 'idempotency-key': 'tls-1' }))).status).toBe(200);
    const pair = await stream.nextPair();
    expect([pair.data, pair.meta.uuid]).toEqual([{ type: 'chat', message: 'over mutual TLS' }, sender.uuid]);
    // The resend is answered from the Idempotency-Key record.
    expect((await ingress.post({ type: 'chat', message: 'over mutual TLS' }, ingress.headers(sender, key, channel, { 'idempotency-key': 'tls-1' }))).status).toBe(200);
    expect((await ingress.post({ type: 'chat', message: 'second' }, ingress.headers(sender, key, channel))).status).toBe(200);
    const resumed = await gateway.connect(gateway.headers(gateway.player('Late'), key, channel, { 'last-event-id': String(pair.id) }));
    expect((await resumed.nextPair()).data).toEqual({ type: 'chat', message: 'second' });

    const replayed = await runCli(['replay', channel, '--json'], nats.env('cli'));
    expect([replayed.code, replayed.stdout.trim().split('\n').length]).toEqual([0, 2]);
    const trace = await runCli(['trace', String(pair.id)], nats.env('cli'));
    expect(trace.code, trace.stderr).toBe(0);
    expect((await runCliJson<Array<{ uuid: string }>>(['streams', '--json'], nats.env('cli'))).map((s) => s.uuid)).toContain(listener.uuid);
    expect((await runCli(['stats'], nats.env('cli'))).code).toBe(0);
    expect(nats.violations()).toEqual([]);
  }, 120_000);

  it('a second stream of one account on another gateway evicts the first, and a stopped gateway’s claims are swept', async () => {
    const other = await RelayFixture.start({ service: 'gateway', nats, profile, setup: false, env: { ...nats.env('gateway'), RELAY_NODE_ID: 'gateway-2', NODE_TIMEOUT: '2s' } });
    opened.push(other);
    const player = gateway.player('Twice');
    const first = await gateway.connect(gateway.headers(player, key, 'evict.example.net'));
    await other.connect(other.headers(player, key, 'evict.example.net'));
    expect((await first.closeEvent()).reason).toBe('evicted');
    // gateway-2 stops without a word (its claims stay behind); gateway-1 sweeps them.
    const lone = other.player('Lone');
    await other.connect(other.headers(lone, key, 'swept.example.net'));
    other.server.core.nats.nc.close().catch(() => undefined);
    await waitUntil(async () => ((await runCliJson<Array<{ uuid: string }>>(['streams', '--json'], nats.env('cli'))).some((s) => s.uuid === lone.uuid) ? undefined : true), 'the stopped gateway’s claim to be swept', { timeoutMs: 60_000 });
    expect(nats.violations()).toEqual([]);
  }, 120_000);

  it('cracked clients are banned by the ingress and the gateway; operators lift the bans with the CLI and the console', async () => {
    const cracked = ingress.player('Cracked');
    const refused = await ingress.post({ type: 'chat', message: 'x' }, ingress.headers(cracked, { ...key, clientSecret: 'wrong' }, 'tls.example.net'));
    expect([refused.status, refused.body]).toMatchObject([403, { error: 'banned' }]);
    const unknownId = gateway.player('UnknownId');
    const stream = await gateway.open(gateway.headers(unknownId, { ...key, clientId: 'relay_unknown' }, 'tls.example.net'));
    expect(stream.status).toBe(403);
    const listed = await runCliJson<BanRecord[]>(['bans', 'list', '--json'], nats.env('cli'));
    expect(listed.map((b) => b.uuid)).toEqual(expect.arrayContaining([cracked.uuid, unknownId.uuid]));
    expect((await runCli(['bans', 'remove', cracked.uuid], nats.env('cli'))).code).toBe(0);
    expect((await admin.call(`/api/bans/${unknownId.uuid}`, { method: 'DELETE' })).status).toBe(204);
    // An operator's own ban, through the console, closes the listener's stream.
    const listener = gateway.player('Banned');
    const open = await gateway.connect(gateway.headers(listener, key, 'tls.example.net'));
    expect((await admin.call('/api/bans', { method: 'POST', body: { uuid: listener.uuid, reason: 'over TLS' } })).status).toBe(201);
    expect((await open.closeEvent()).reason).toBe('banned');
    expect(nats.violations()).toEqual([]);
  }, 120_000);

  it('the operator’s CLI creates, lists and revokes keys and reads the audit trail; the console shows the mesh', async () => {
    const made = await runCliJson<CreatedKey>(['keys', 'create', '--scopes', 'irc.connection.establish', '--json'], nats.env('cli'));
    expect((await runCliJson<Array<{ clientId: string }>>(['keys', 'list', '--json'], nats.env('cli'))).map((k) => k.clientId)).toContain(made.clientId);
    expect((await runCli(['keys', 'revoke', made.clientId], nats.env('cli'))).code).toBe(0);
    expect((await runCli(['audit', '--json'], nats.env('cli'))).code).toBe(0);
    for (const path of ['/api/overview', '/api/nodes', '/api/channels', '/api/channels/tls.example.net/streams', '/api/channels/tls.example.net/replay', '/api/audit']) {
      expect((await admin.call(path)).status, path).toBe(200);
    }
    expect(nats.violations()).toEqual([]);
  }, 120_000);
});

describe('a TLS setting that does not fit the server stops start-up with one sentence', () => {
  const start = (env: Record<string, string>): Promise<unknown> =>
    startRelayServer({ service: 'ingress', env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', PROFILE_API_URL: profile.url, ...env } });

  it('a CA that did not sign the server certificate: the sentence names NATS_TLS_CA', async () => {
    await expect(start({ ...nats.env('ingress'), NATS_TLS_CA: nats.certs!.otherCa })).rejects.toThrow(/not signed by NATS_TLS_CA/);
  });

  it('TLS asked of a plain-text server: the sentence names the NATS_TLS_* settings', async () => {
    const plain = await startTestNats();
    try {
      await expect(start({ NATS_URL: plain.url, NATS_TLS_CA: nats.certs!.ca })).rejects.toThrow(/NATS_TLS_CA .*offers only plain text/);
    } finally {
      await plain.stop();
    }
  });

  it('a server that requires TLS and no NATS_TLS_CA: the sentence says to set it', async () => {
    const { NATS_URL, NATS_USER, NATS_PASSWORD } = nats.env('ingress');
    await expect(start({ NATS_URL: NATS_URL!, NATS_USER: NATS_USER!, NATS_PASSWORD: NATS_PASSWORD! })).rejects.toThrow(/requires TLS .*set NATS_TLS_CA/);
  });

  it('a server name the certificate does not carry: the sentence names NATS_TLS_SERVER_NAME', async () => {
    await expect(start({ ...nats.env('ingress'), NATS_TLS_SERVER_NAME: 'nats.example.net' })).rejects.toThrow(/NATS_TLS_SERVER_NAME/);
  });
});
