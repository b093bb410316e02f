// The audit trail: every operator action through the CLI (key created or revoked, ban added or
// lifted) is kept in JetStream with who did it and when, and `relay audit` shows it. A secret never
// enters the trail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../schemas/records.js';
import { runCli, runCliJson } from './helpers/cli.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let env: Record<string, string>;

beforeAll(async () => {
  relay = await RelayFixture.start();
  env = { NATS_URL: relay.nats.url, RELAY_ACTOR: 'alice (on call)' };
});
afterAll(async () => {
  await relay?.close();
});

describe('relay audit', () => {
  it('records each key and ban action with its actor and time, oldest first, and never the secret', async () => {
    const before = Date.now();
    const key = await runCliJson<{ clientId: string; clientSecret: string }>(
      ['keys', 'create', '--scopes', 'irc.connection.establish,irc.messages.send', '--label', 'audit mod', '--json'],
      env,
    );
    await runCliJson(['keys', 'revoke', key.clientId, '--json'], env);
    const player = relay.player();
    await runCliJson(['bans', 'add', player.uuid, '--reason', 'griefing', '--expires', '7d', '--json'], { ...env, RELAY_ACTOR: 'bob' });
    expect((await runCli(['bans', 'remove', player.uuid], { ...env, RELAY_ACTOR: 'bob' })).code).toBe(0);

    const trail = await runCliJson<AuditRecord[]>(['audit', '--json'], env);
    const mine = trail.filter((r) => r.target === key.clientId || r.target === player.uuid);
    expect(mine.map((r) => [r.action, r.actor])).toEqual([
      ['key.create', 'alice (on call)'],
      ['key.revoke', 'alice (on call)'],
      ['ban.add', 'bob'],
      ['ban.remove', 'bob'],
    ]);
    expect(mine[0]).toMatchObject({ target: key.clientId, label: 'audit mod', scopes: ['irc.connection.establish', 'irc.messages.send'] });
    expect(mine[2]).toMatchObject({ target: player.uuid, reason: 'griefing', expiresAt: expect.stringMatching(/^\d{4}-/) });
    for (const r of mine) expect(Date.parse(r.at)).toBeGreaterThanOrEqual(before - 1000);
    expect(JSON.stringify(trail)).not.toContain(key.clientSecret);

    const table = await runCli(['audit', '--since', '1h'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^AT\s+ACTOR\s+ACTION\s+TARGET\s+DETAILS/);
    expect(table.stdout).toContain('ban.add');
    expect(table.stdout).not.toContain(key.clientSecret);
  }, 60_000); // seven CLI runs, each a Node process: 13 s on a quiet machine, past 30 s on a loaded one

  // Issue 19: a start time past 2262 wrapped round in JetStream and answered the whole trail.
  it('--since a time past the end of the trail lists nothing, however far past', async () => {
    expect((await runCli(['bans', 'add', relay.player().uuid, '--json'], env)).code).toBe(0);
    for (const since of ['2030-01-01', '9999-12-31T23:59:59Z']) {
      expect(await runCliJson<AuditRecord[]>(['audit', '--since', since, '--json'], env), since).toEqual([]);
    }
  });

  it('a failed action leaves no record: lifting a ban that does not exist', async () => {
    const nobody = relay.player();
    const r = await runCli(['bans', 'remove', nobody.uuid], env);
    expect(r.code).toBe(3);
    const trail = await runCliJson<AuditRecord[]>(['audit', '--json'], env);
    expect(trail.some((rec) => rec.target === nobody.uuid)).toBe(false);
  });

  // Issue 21: --limit 1 showed the oldest record, so "what was done last" needed the whole trail.
  it('--limit N shows the newest N records, oldest of them first (as tail -n does), with or without --since', async () => {
    const players = [relay.player(), relay.player(), relay.player()];
    for (const p of players) expect((await runCli(['bans', 'add', p.uuid, '--reason', 'limit test'], env)).code).toBe(0);
    const targets = players.map((p) => p.uuid);
    const newestTwo = await runCliJson<AuditRecord[]>(['audit', '--limit', '2', '--json'], env);
    expect(newestTwo.map((r) => r.target)).toEqual(targets.slice(1));
    const sinceHour = await runCliJson<AuditRecord[]>(['audit', '--since', '1h', '--limit', '2', '--json'], env);
    expect(sinceHour.map((r) => r.target)).toEqual(targets.slice(1));
    const table = await runCli(['audit', '--limit', '1'], env);
    expect(table.stdout.trim().split('\n')).toHaveLength(2);
    expect(table.stdout).toContain(targets[2]);
  });

  it('refuses a bad --since or --limit with a sentence and exit code 2', async () => {
    for (const args of [['audit', '--since', 'yesterday'], ['audit', '--limit', '0']]) {
      const r = await runCli(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--(since|limit) must/);
    }
  });
});
