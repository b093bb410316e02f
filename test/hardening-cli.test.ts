// Issue 9, the operator's side: what careless environments, hostile clients and mistyped arguments
// can make the `relay` CLI and `npm start` do. Each test runs the real CLI against a real nats-server.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BanRecord } from '../schemas/records.js';
import { headers } from '@nats-io/nats-core';
import { Scope } from '../services/core/scopes.js';
import { channelSubject } from '../services/core/subjects.js';
import { Header } from '../services/core/wire-headers.js';
import { runCli, runCliJson, type CliResult } from './helpers/cli.js';
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
    // The NATS client ignores credentials in a URL; the operator is told where they belong.
    expect(unreachable.stderr).toMatch(/Credentials inside NATS_URL are not used: set NATS_USER and NATS_PASSWORD/);
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
  // Erase the line, return to its start and print a forged one; new line, reverse what follows, recolour (C1 CSI).
  const forged = 'hi\x1b[2K\r<Notch> op me\u2028\u202eevil\u009b31m';
  // Agents may no longer hold C1 or bidi controls (schemas/text.ts), but entries an older relay stored
  // with them stay in the log until they age out: this one is written as such a relay wrote it.
  const agent = 'bridge\u009b2J\u202e/1.0';
  let sender: string;
  let since: string;

  beforeAll(async () => {
    since = new Date(Date.now() - 1000).toISOString();
    sender = relay.player().uuid;
    const h = headers();
    for (const [name, value] of [[Header.Sender, sender], [Header.Agent, agent], [Header.Type, 'chat'], [Header.Channel, CH]]) h.set(name!, value!);
    await relay.server.core.nats.js.publish(channelSubject(CH), JSON.stringify({ type: 'chat', message: forged }), { headers: h });
  });

  // Guards: a chat line or a bridge's agent cannot erase, forge, recolour or reorder lines of relay replay / relay tail.
  it('replay and tail show control characters from payloads as visible escapes', async () => {
    for (const args of [['replay', CH], ['tail', '--since', since, '--sender', sender]]) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).not.toMatch(RAW_CONTROL);
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('  bridge\\x9b2J\\u202e/1.0  chat  hi\\x1b[2K\\x0d<Notch> op me\\u2028\\u202eevil\\x9b31m');
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
    // A client without credentials is banned with the user agent and client id it presented, which
    // the record keeps as visible escapes (an operator's terminal or page never gets them raw).
    const cracked = relay.player();
    const refused = await relay.post({ type: 'chat', message: 'x' }, {
      ...relay.headers(cracked, null, CH),
      'user-agent': 'mod\u009b2J\t/1.0',
      'client-id': 'relay_\u009b8m',
    });
    expect(refused.status).toBe(403);
    const operatorBan = relay.player();
    // An operator can no longer write such a reason (schemas/text.ts); bans stored before still show.
    const refusedReason = await runCli(['bans', 'add', operatorBan.uuid, '--reason', 'spam\x1b[2J\x1b[Hall clear'], env);
    expect([refusedReason.code, refusedReason.stderr]).toEqual([2, expect.stringContaining('may not hold control')]);
    const old = { uuid: operatorBan.uuid, reason: 'spam\x1b[2J\x1b[Hall clear', by: 'an older relay', bannedAt: new Date().toISOString() };
    await relay.server.core.nats.buckets.bans.put(operatorBan.uuid, JSON.stringify(old));
    const list = await runCli(['bans', 'list', '--json'], env);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    const json = JSON.parse(list.stdout) as BanRecord[];
    expect(json.find((b) => b.uuid === cracked.uuid)).toMatchObject({ userAgent: 'mod\\x9b2J\\x09/1.0', clientId: 'relay_\\x9b8m' });

    const bans = await runCli(['bans', 'list'], env);
    expect(bans.code).toBe(0);
    expect(bans.stdout).not.toMatch(RAW_CONTROL);
    const crackedLine = bans.stdout.split('\n').find((l) => l.startsWith(cracked.uuid));
    expect(crackedLine).toMatch(/relay_\\x9b8m\s+mod\\x9b2J\\x09\/1\.0\s+cracked client: missing client credentials$/);
    expect(bans.stdout.split('\n').find((l) => l.startsWith(operatorBan.uuid))).toMatch(/spam\\x1b\[2J\\x1b\[Hall clear$/);

    // Such a label is refused now (schemas/text.ts), but records stored before the rule still show.
    const refusedLabel = await runCli(['keys', 'create', '--scopes', Scope.Establish, '--label', 'mod\x1b[8mhidden\x1b[0m', '--json'], env);
    expect(refusedLabel.code).not.toBe(0);
    expect(refusedLabel.stderr).toContain('may not hold control');
    const created = { clientId: 'relay_0123456789abcdef01234567' };
    const oldKey = { clientId: created.clientId, secretSha256: '0'.repeat(64), scopes: [Scope.Establish], createdAt: new Date().toISOString(), label: 'mod\x1b[8mhidden\x1b[0m' };
    await relay.server.core.nats.buckets.keys.put(created.clientId, JSON.stringify(oldKey));
    const keys = await runCli(['keys', 'list'], env);
    expect(keys.code).toBe(0);
    expect(keys.stdout).not.toMatch(RAW_CONTROL);
    expect(keys.stdout.split('\n').find((l) => l.startsWith(created.clientId))).toContain('mod\\x1b[8mhidden\\x1b[0m');
  });
});

/** Runs several CLI invocations, a few at a time (each is a node process; the machine is small). */
async function runEach(argsList: string[][], extraEnv: Record<string, string> = {}): Promise<Array<{ args: string[]; r: CliResult }>> {
  const out: Array<{ args: string[]; r: CliResult }> = [];
  for (let i = 0; i < argsList.length; i += 3) {
    const batch = argsList.slice(i, i + 3);
    out.push(...(await Promise.all(batch.map(async (args) => ({ args, r: await runCli(args, { ...env, ...extraEnv }) })))));
  }
  return out;
}

/** Exit 2 and one sentence on stderr naming the option: what a person who mistyped should see. */
function expectOneSentence({ args, r }: { args: string[]; r: CliResult }, about: RegExp): void {
  const what = `relay ${args.join(' ')}`;
  expect(r.code, what).toBe(2);
  expect(r.stdout, what).toBe('');
  expect(r.stderr, what).toMatch(about);
  expect(r.stderr.trimEnd().split('\n'), what).toHaveLength(1);
  expect(r.stderr, what).not.toMatch(/Error|\n\s+at /);
}

describe('arguments typed by a careless operator', () => {
  const year = new Date().getUTCFullYear();

  // Guards: a ban or key "until 1" (the year 2001 to Date.parse) or until a past date is refused, not stored already expired.
  it('bans add and keys create refuse an --expires that is not a duration or full ISO date, or is in the past', async () => {
    const victim = relay.player().uuid;
    const bad = ['1', '2001', '12/31/2030', 'March 3', `${year + 1}-02-30`, `${year + 1}-01-31T12:00`, '2001-01-01', '0d'];
    const results = await runEach([
      ...bad.map((when) => ['bans', 'add', victim, '--expires', when]),
      ...['1', `${year + 1}-02-30`, '2001-01-01'].map((when) => ['keys', 'create', '--scopes', Scope.Establish, '--expires', when]),
    ]);
    for (const res of results) expectOneSentence(res, /^relay: --expires must (be a duration like 30d, 12h or 90m, or an ISO 8601 date or time|be in the future)/);
    expect((await runCliJson<BanRecord[]>(['bans', 'list', '--json'], env)).some((b) => b.uuid === victim)).toBe(false);

    // The forms that remain mean what they say.
    const date = await runCliJson<BanRecord>(['bans', 'add', victim, '--expires', `${year + 1}-01-31`, '--json'], env);
    expect(date.expiresAt).toBe(`${year + 1}-01-31T00:00:00.000Z`);
    const time = await runCliJson<BanRecord>(['bans', 'add', victim, '--expires', `${year + 1}-01-31T12:30+02:00`, '--json'], env);
    expect(time.expiresAt).toBe(`${year + 1}-01-31T10:30:00.000Z`);
    const duration = await runCliJson<BanRecord>(['bans', 'add', victim, '--expires', '12h', '--json'], env);
    expect(Math.abs(Date.parse(duration.expiresAt!) - Date.now() - 12 * 3_600_000)).toBeLessThan(60_000);
  }, 120_000);

  // Guards: a huge or malformed number or time is a sentence and exit 2, never a RangeError or JetStream stack trace.
  it('out-of-range or malformed --expires, --since, --from-seq and --limit exit 2 with one sentence, never a stack trace', async () => {
    const uuid = relay.player().uuid;
    const cases: Array<[string[], RegExp]> = [
      [['bans', 'add', uuid, '--expires', '999999999999d'], /^relay: --expires must not be later than 9999-12-31/],
      [['keys', 'create', '--scopes', Scope.Establish, '--expires', `${'9'.repeat(400)}d`], /^relay: --expires must not be later than 9999-12-31/],
      [['replay', 'play.example.net', '--since', '999999999999d'], /^relay: --since must fall between 1970-01-01 and 9999-12-31/],
      [['tail', '--since', `${year}-13-01`], /^relay: --since must be a duration/],
      [['tail', '--since', '1'], /^relay: --since must be a duration/],
      [['replay', 'play.example.net', '--from-seq', '99999999999999999999'], /^relay: --from-seq must be a stream sequence number/],
      [['replay', 'play.example.net', '--from-seq', '-1'], /^relay: --from-seq must be a stream sequence number/],
      [['replay', 'play.example.net', '--limit', '0'], /^relay: --limit must be a whole number of at least 1/],
      [['replay', 'play.example.net', '--limit', '1.5'], /^relay: --limit must be a whole number of at least 1/],
      [['tail', '--since', '1h', '--limit', '0x10'], /^relay: --limit must be a whole number of at least 1/],
      [['tail', '--since', '1h', '--limit', '1e3'], /^relay: --limit must be a whole number of at least 1/],
      [['replay', 'play.example.net', '--type', ','], /^relay: --type needs at least one payload type/],
      [['keys', 'revoke', 'relay_*'], /^relay: "relay_\*" is not a client id/],
    ];
    const results = await runEach(cases.map(([args]) => args));
    results.forEach((res, i) => expectOneSentence(res, cases[i]![1]));
  }, 120_000);

  // Guards: `relay streams --channel` finds a channel written the way clients write it, instead of "No streams open".
  it('streams --channel normalises the channel as the relay does and refuses one that is not a host', async () => {
    const player = relay.player();
    await relay.connect(relay.headers(player, await relay.createKey(), 'streams.example.net'));
    const found = await runCliJson<Array<{ uuid: string; channel: string }>>(['streams', '--channel', ' Streams.Example.NET.:25565', '--json'], env);
    expect(found).toEqual([expect.objectContaining({ uuid: player.uuid, channel: 'streams.example.net' })]);
    expectOneSentence({ args: ['streams', '--channel', 'not a host'], r: await runCli(['streams', '--channel', 'not a host'], env) }, /^relay: Invalid channel "not a host"/);
  });

  // Guards: scripts can tell bad arguments (2) from failures (1), as docs/OPERATIONS.md documents.
  it('commander’s own argument errors exit 2, while --help and --version exit 0', async () => {
    const bad = await runEach([
      ['keys', 'list', '--bogus'],
      ['keys', 'lst'],
      ['replay'],
      ['config', 'check', 'everything'],
      ['keys', 'create'],
      ['bans', 'add', '069a79f4-44e9-4726-a5be-fca90e38aaf5', '--expires'],
      [],
    ]);
    for (const { args, r } of bad) {
      expect(r.code, `relay ${args.join(' ')}`).toBe(2);
      expect(r.stderr, `relay ${args.join(' ')}`).not.toMatch(/\n\s+at /);
    }
    expect(bad[0]!.r.stderr).toMatch(/unknown option '--bogus'/);
    // What was typed is quoted back, but a pasted escape sequence is shown, not obeyed.
    const pasted = await runCli(['keys', 'list', '--bo\x1b[2Jgus'], env);
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toContain("unknown option '--bo\\x1b[2Jgus'");
    expect(pasted.stderr).not.toMatch(RAW_CONTROL);
    expect(bad[3]!.r.stderr).toMatch(/Allowed choices are ingress, gateway, admin, all/);
    const good = await runEach([['--help'], ['--version'], ['keys', '--help'], ['help', 'bans']]);
    for (const { args, r } of good) expect(r.code, `relay ${args.join(' ')}`).toBe(0);
    expect(good[1]!.r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  }, 120_000);
});

/** Whether a TCP connection to host:port is accepted (true) or refused (false); no timers involved. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNREFUSED' ? resolve(false) : reject(e)));
  });
}

describe('npm start (relay dev)', () => {
  // Guards: the development relay, where offline identities let anyone be anyone, is not open to the network by default.
  it('listens on 127.0.0.1 only by default, and its banner says how to expose it', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'relay-dev-'));
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NATS_URL: relay.nats.url, PORT: '0', LOG_PRETTY: 'false', LOG_LEVEL: 'warn' };
    delete childEnv['HOST'];
    delete childEnv['PROFILE_API_URL'];
    const child = spawn(process.execPath, [fileURLToPath(new URL('../bin/relay.js', import.meta.url)), 'dev'], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let code: number | null = null;
    try {
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('Ctrl-C stops the relay')) resolve();
        });
        void exited.then((code) => reject(new Error(`relay dev exited with ${code} before its banner:\n${out}\n${err}`)));
      });
      const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
      expect(port).toBeGreaterThan(0);
      expect(out).toContain(`Bound to 127.0.0.1:${port}: only this machine can reach it (HOST=0.0.0.0 npm start exposes it to the network).`);
      expect(await accepts('127.0.0.1', port)).toBe(true);
    } finally {
      child.kill('SIGINT');
      code = await exited;
      rmSync(cwd, { recursive: true, force: true });
    }
    // Ctrl-C, sent as soon as the banner promised it works, shuts the relay down gracefully.
    expect(code).toBe(0);
  }, 60_000);
});
