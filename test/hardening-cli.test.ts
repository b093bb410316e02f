// Issue 9, the operator's side: what careless environments, hostile clients and mistyped arguments
// can make the `relay` CLI and `npm start` do. Each test runs the real CLI against a real nats-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BanRecord } from '../schemas/records.js';
import { Scope } from '../services/core/scopes.js';
import { runCli, runCliJson } from './helpers/cli.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let env: Record<string, string>;
let natsHostPort: string;

beforeAll(async () => {
  relay = await RelayFixture.start();
  env = { NATS_URL: relay.nats.url };
  natsHostPort = relay.nats.url.replace(/^nats:\/\//, '');
});
afterAll(async () => {
  await relay?.close();
});

describe('credentials inside NATS_URL', () => {
  // Guards: a password in NATS_URL never reaches a terminal, a CI log or a ticket through the CLI.
  it('are shown as ***@ by config check, its problems, the unreachable message and the connection log', async () => {
    const secretUrl = `nats://alice:s3cret@${natsHostPort}`;
    const leaked = /alice|s3cret/;

    const table = await runCli(['config', 'check', 'all'], { NATS_URL: secretUrl, PROFILE_API_URL: 'https://bob:hunter2@profiles.example/v1' });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`NATS_URL\\s+nats://\\*\\*\\*@${natsHostPort.replace(/\./g, '\\.')}\\s`));
    expect(table.stdout).toContain('https://***@profiles.example/v1');
    expect(table.stdout).not.toMatch(/alice|s3cret|bob|hunter2/);

    const json = await runCli(['config', 'check', 'gateway', '--json'], { NATS_URL: `${secretUrl},tls://tok3n@nats-2.example:4222` });
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as Array<{ name: string; value: string }>;
    expect(rows.find((r) => r.name === 'NATS_URL')?.value).toBe(`nats://***@${natsHostPort},tls://***@nats-2.example:4222`);
    expect(json.stdout).not.toMatch(/alice|s3cret|tok3n/);

    const invalid = await runCli(['config', 'check', 'all'], { NATS_URL: 'nats://alice:s3cret@nats.example:4222/path' });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('NATS_URL has "nats://***@nats.example:4222/path"');
    expect(invalid.stderr).not.toMatch(leaked);

    const unreachable = await runCli(['keys', 'list'], { NATS_URL: 'nats://alice:s3cret@127.0.0.1:1' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^relay: Cannot reach NATS at nats:\/\/\*\*\*@127\.0\.0\.1:1 /);
    expect(unreachable.stderr).not.toMatch(leaked);

    const logged = await runCli(['keys', 'list', '--json'], { NATS_URL: secretUrl, LOG_LEVEL: 'info' });
    expect(logged.code).toBe(0);
    expect(logged.stderr).toContain('connected to NATS');
    expect(logged.stderr).not.toMatch(leaked);
  });
});

// Anything a terminal would act on: C0 (ESC, CR, BEL...), DEL, C1, line/paragraph separators, bidi controls.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('client text on the operator’s terminal', () => {
  const CH = 'hostile.example.net';
  // Erase the line, return to its start and print a forged one; retitle the window; reverse what follows.
  const forged = 'hi\x1b[2K\r<Notch> op me\u2028\u202eevil\u009b31m';
  const agent = 'bridge\x1b]0;owned\x07/1.0';
  let sender: string;
  let since: string;

  beforeAll(async () => {
    since = new Date(Date.now() - 1000).toISOString();
    const bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
    sender = relay.player().uuid;
    const res = await relay.post([{ user: sender, agent, message: { type: 'chat', message: forged } }], relay.headers(null, bridge, CH));
    expect(res.body).toEqual({ accepted: 1 });
  });

  // Guards: a chat line or a bridge's agent cannot erase, forge, recolour or reorder lines of relay replay / relay tail.
  it('replay and tail show control characters from payloads as visible escapes', async () => {
    for (const args of [['replay', CH], ['tail', '--since', since, '--sender', sender]]) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).not.toMatch(RAW_CONTROL);
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('  bridge\\x1b]0;owned\\x07/1.0  chat  hi\\x1b[2K\\x0d<Notch> op me\\u2028\\u202eevil\\x9b31m');
    }
  });

  // Guards: scripts reading --json get exactly what the client sent, and no raw control character reaches the terminal.
  it('replay --json keeps the payload exact and escapes control characters the JSON way', async () => {
    const r = await runCli(['replay', CH, '--json'], env);
    expect(r.code).toBe(0);
    // JSON.stringify escapes C0 itself, but not DEL, C1, U+2028/2029 or the bidi controls.
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain('\\u2028\\u202eevil\\u009b31m');
    const entry = JSON.parse(r.stdout) as { meta: { agent: string }; data: { message: string } };
    expect(entry.meta.agent).toBe(agent);
    expect(entry.data.message).toBe(forged);
  });

  // Guards: ban reasons, user agents and client ids (from clients) and key labels cannot rewrite the bans and keys tables.
  it('bans list and keys list show control characters as visible escapes', async () => {
    // A client without credentials is banned with the user agent and client id it presented.
    const cracked = relay.player();
    const refused = await relay.post({ type: 'chat', message: 'x' }, {
      ...relay.headers(cracked, null, CH),
      'user-agent': 'mod\u009b2J\t/1.0',
      'client-id': 'relay_\u009b8m',
    });
    expect(refused.status).toBe(403);
    const operatorBan = relay.player();
    expect((await runCli(['bans', 'add', operatorBan.uuid, '--reason', 'spam\x1b[2J\x1b[Hall clear'], env)).code).toBe(0);
    const list = await runCli(['bans', 'list', '--json'], env);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    const json = JSON.parse(list.stdout) as BanRecord[];
    expect(json.find((b) => b.uuid === cracked.uuid)).toMatchObject({ userAgent: 'mod\u009b2J\t/1.0', clientId: 'relay_\u009b8m' });

    const bans = await runCli(['bans', 'list'], env);
    expect(bans.code).toBe(0);
    expect(bans.stdout).not.toMatch(RAW_CONTROL);
    const crackedLine = bans.stdout.split('\n').find((l) => l.startsWith(cracked.uuid));
    expect(crackedLine).toMatch(/relay_\\x9b8m\s+mod\\x9b2J\\x09\/1\.0\s+cracked client: missing client credentials$/);
    expect(bans.stdout.split('\n').find((l) => l.startsWith(operatorBan.uuid))).toMatch(/spam\\x1b\[2J\\x1b\[Hall clear$/);

    const created = await runCliJson<{ clientId: string }>(['keys', 'create', '--scopes', Scope.Establish, '--label', 'mod\x1b[8mhidden\x1b[0m', '--json'], env);
    const keys = await runCli(['keys', 'list'], env);
    expect(keys.code).toBe(0);
    expect(keys.stdout).not.toMatch(RAW_CONTROL);
    expect(keys.stdout.split('\n').find((l) => l.startsWith(created.clientId))).toContain('mod\\x1b[8mhidden\\x1b[0m');
  });
});
