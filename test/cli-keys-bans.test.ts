// The CLI forms scripts rely on (DESIGN.md section 4), run as a child process against real NATS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord, BanRecord } from '../schemas/records.js';
import { runCli, runCliJson } from './helpers/cli.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let env: Record<string, string>;

beforeAll(async () => {
  relay = await RelayFixture.start();
  env = { NATS_URL: relay.nats.url };
});
afterAll(async () => {
  await relay?.close();
});

describe('relay keys', () => {
  it('create --json prints clientId, clientSecret and scopes, and the key works at once', async () => {
    const created = await runCliJson<{ clientId: string; clientSecret: string; scopes: string[] }>(
      ['keys', 'create', '--scopes', 'irc.connection.establish,irc.messages.send,irc.messages.receive', '--label', 'test mod', '--json'],
      env,
    );
    expect(Object.keys(created).sort()).toEqual(['clientId', 'clientSecret', 'label', 'scopes']);
    expect(created.scopes).toEqual(['irc.connection.establish', 'irc.messages.send', 'irc.messages.receive']);
    const s = await relay.connect(relay.headers(relay.player(), created, 'cli.example.net'));
    const res = await relay.post({ type: 'chat', message: 'made by the cli' }, relay.headers(relay.player(), created, 'cli.example.net'));
    expect(res.status).toBe(200);
    expect((await s.nextPair()).data.message).toBe('made by the cli');
  });

  it('create with an unknown scope exits non-zero and names it', async () => {
    const r = await runCli(['keys', 'create', '--scopes', 'irc.messages.sned', '--json'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Unknown scope\(s\): irc\.messages\.sned/);
    expect(r.stdout).toBe('');
  });

  it('create --expires accepts a duration and rejects nonsense', async () => {
    const ok = await runCliJson<{ expiresAt: string }>(['keys', 'create', '--scopes', 'irc.connection.establish', '--expires', '30d', '--json'], env);
    const days = (Date.parse(ok.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    const bad = await runCli(['keys', 'create', '--scopes', 'irc.connection.establish', '--expires', 'soon'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--expires/);
  });

  it('list --json is a JSON array that never shows a secret or its hash; revoke marks the key revoked', async () => {
    const created = await runCliJson<{ clientId: string; clientSecret: string }>(['keys', 'create', '--scopes', 'irc.connection.establish', '--json'], env);
    const revoke = await runCli(['keys', 'revoke', created.clientId], env);
    expect(revoke.code).toBe(0);
    const r = await runCli(['keys', 'list', '--json'], env);
    expect(r.code).toBe(0);
    const list = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(Array.isArray(list)).toBe(true);
    const mine = list.find((k) => k['clientId'] === created.clientId);
    expect(mine).toMatchObject({ status: 'revoked', scopes: ['irc.connection.establish'] });
    expect(r.stdout).not.toContain(created.clientSecret);
    expect(r.stdout).not.toMatch(/secret/i);
  });

  it('revoke of an unknown id exits non-zero with a sentence', async () => {
    const r = await runCli(['keys', 'revoke', 'relay_ffffffffffffffffffffffff'], env);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/No key with client id/);
  });
});

describe('relay bans', () => {
  it('add, list --json and remove, in the exact forms scripts use', async () => {
    const p = relay.player();
    const add = await runCli(['bans', 'add', p.uuid.replace(/-/g, '').toUpperCase(), '--reason', 'spam'], env);
    expect(add.code).toBe(0);
    const list = await runCliJson<BanRecord[]>(['bans', 'list', '--json'], env);
    expect(list.find((b) => b.uuid === p.uuid)).toMatchObject({ uuid: p.uuid, reason: 'spam' });
    // The ban is in force on the relay.
    const key = await relay.createKey();
    await eventually(async () => (await relay.post({ type: 'chat', message: 'x' }, relay.headers(p, key, 'cli.example.net'))).status === 403, 'the ban to apply');
    const remove = await runCli(['bans', 'remove', p.uuid], env);
    expect(remove.code).toBe(0);
    expect((await runCliJson<BanRecord[]>(['bans', 'list', '--json'], env)).some((b) => b.uuid === p.uuid)).toBe(false);
    const again = await runCli(['bans', 'remove', p.uuid], env);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/is not banned/);
  });

  // Issue 21: the list said "by: cli" while the audit record named RELAY_ACTOR.
  it('list names who added the ban as the audit trail does (RELAY_ACTOR), not "cli"', async () => {
    const p = relay.player();
    const actor = { ...env, RELAY_ACTOR: 'carol (moderator)' };
    expect((await runCli(['bans', 'add', p.uuid, '--reason', 'spam'], actor)).code).toBe(0);
    const ban = (await runCliJson<BanRecord[]>(['bans', 'list', '--json'], env)).find((b) => b.uuid === p.uuid);
    const audit = (await runCliJson<AuditRecord[]>(['audit', '--json'], env)).find((r) => r.target === p.uuid && r.action === 'ban.add');
    expect(ban?.by).toBe('carol (moderator)');
    expect(audit?.actor).toBe(ban?.by);
    const table = await runCli(['bans', 'list'], env);
    expect(table.stdout.split('\n').find((l) => l.startsWith(p.uuid))).toContain('carol (moderator)');
  });

  it('add refuses something that is not a UUID', async () => {
    const r = await runCli(['bans', 'add', 'Notch'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a UUID/);
  });
});

describe('the relay command', () => {
  it('--help lists the commands', async () => {
    const r = await runCli(['--help'], {});
    expect(r.code).toBe(0);
    for (const c of ['keys', 'bans', 'streams', 'replay', 'serve']) expect(r.stdout).toContain(c);
  });

  it('says where it looked when NATS cannot be reached', async () => {
    const r = await runCli(['keys', 'list'], { NATS_URL: 'nats://127.0.0.1:1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Cannot reach NATS at nats:\/\/127\.0\.0\.1:1/);
  });
});
