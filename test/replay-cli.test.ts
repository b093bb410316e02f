// Reading the event log for debugging: relay replay, tail and stats against a real stream.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import type { LogEntry } from '../services/core/log-entry.js';
import { runCli } from './helpers/cli.js';
import { RelayFixture, type Player } from './helpers/relay.js';

let relay: RelayFixture;
let key: CreatedKey;
let env: Record<string, string>;
let alice: Player;
let bob: Player;
const CH = 'replay.example.net';
const OTHER = 'other-replay.example.net';
const LIVE = 'tail-live.example.net';
let firstSeq = 0;

const PRESENCE = { type: 'presence', inventory: [], attributes: { absorption: 0, health: 17, hunger: 20, oxygen: 300, saturation: 5 } };

beforeAll(async () => {
  relay = await RelayFixture.start();
  env = { NATS_URL: relay.nats.url };
  key = await relay.createKey();
  alice = relay.player('Alice');
  bob = relay.player('Bob');
  const s = await relay.connect(relay.headers(relay.player(), key, CH));
  await relay.post({ type: 'chat', message: 'hello from alice' }, relay.headers(alice, key, CH));
  await relay.post(PRESENCE, relay.headers(bob, key, CH));
  await relay.post({ type: 'chat', message: 'hello from bob' }, relay.headers(bob, key, CH));
  await relay.post({ type: 'chat', message: 'elsewhere' }, relay.headers(alice, key, OTHER));
  firstSeq = (await s.nextPair()).id!;
});
afterAll(async () => {
  await relay?.close();
});

const jsonLines = (out: string): LogEntry[] => out.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogEntry);

describe('relay replay', () => {
  it('prints a channel’s payloads in order, one line each: time, sequence, sender, agent, type, summary', async () => {
    const r = await runCli(['replay', CH], env);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  #${firstSeq}  ${alice.uuid}  testmod/1\\.0\\.0\\S*  chat  hello from alice$`));
    expect(lines[1]).toMatch(/presence {2}health 17, 0 slots$/);
    expect(r.stdout).not.toContain('elsewhere');
  });

  it('--json prints one meta+data object per line, ready for jq', async () => {
    const r = await runCli(['replay', CH, '--json'], env);
    const entries = jsonLines(r.stdout);
    expect(entries.map((e) => e.data.type)).toEqual(['chat', 'presence', 'chat']);
    expect(entries[0]).toEqual({
      seq: firstSeq,
      time: expect.any(String),
      meta: { uuid: alice.uuid, agent: expect.stringMatching(/^testmod/), channel: CH },
      data: { type: 'chat', message: 'hello from alice' },
    });
  });

  it('filters by --type, --sender and --from-seq, and the channel name is normalised', async () => {
    const byType = jsonLines((await runCli(['replay', CH, '--type', 'presence', '--json'], env)).stdout);
    expect(byType.map((e) => e.data.type)).toEqual(['presence']);
    const bySender = jsonLines((await runCli(['replay', 'REPLAY.example.net.', '--sender', bob.uuid.replace(/-/g, ''), '--json'], env)).stdout);
    expect(bySender.map((e) => e.meta.uuid)).toEqual([bob.uuid, bob.uuid]);
    const fromSeq = jsonLines((await runCli(['replay', CH, '--from-seq', String(firstSeq + 1), '--json'], env)).stdout);
    expect(fromSeq.map((e) => e.seq)).toEqual([firstSeq + 1, firstSeq + 2]);
  });

  it('--since takes a duration or an ISO time', async () => {
    const recent = jsonLines((await runCli(['replay', CH, '--since', '10m', '--json'], env)).stdout);
    expect(recent).toHaveLength(3);
    const future = await runCli(['replay', CH, '--since', new Date(Date.now() + 3_600_000).toISOString(), '--json'], env);
    expect(future.code).toBe(0);
    expect(future.stdout).toBe('');
    expect(future.stderr).toMatch(/Nothing stored/);
  });

  // Issue 19: 2030 answered nothing while 9999-12-31 answered the whole channel (JetStream holds a
  // start time as int64 nanoseconds, which end in April 2262).
  it('--since a time past the end of the log prints nothing, however far past', async () => {
    for (const since of ['2030-01-01', '2262-04-12T00:00:00Z', '9999-12-31T23:59:59Z']) {
      const r = await runCli(['replay', CH, '--since', since, '--json'], env);
      expect(r.code, since).toBe(0);
      expect(r.stdout, since).toBe('');
    }
    const tail = await runCli(['tail', '--since', '9999-12-31T23:59:59Z', '--limit', '4', '--json'], env);
    expect(tail.code).toBe(0);
    expect(tail.stdout).toBe('');
  });

  it('refuses bad options with a sentence and exit code 2', async () => {
    for (const args of [['--type', 'teleport'], ['--sender', 'Alice'], ['--since', 'yesterday'], ['--from-seq', 'x']]) {
      const r = await runCli(['replay', CH, ...args], env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^relay: /);
    }
    const badChannel = await runCli(['replay', 'not a host'], env);
    expect(badChannel.code).toBe(2);
  });

  it('--follow prints what is stored, then new payloads as they are stored, until interrupted', async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('../bin/relay.js', import.meta.url)), 'replay', CH, '--follow', '--json'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const seen = new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('followed live')) resolve();
      });
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    // Publish until the follower has shown it: it may still be starting when the first is stored.
    const publisher = (async () => {
      for (let i = 0; i < 200 && !out.includes('followed live'); i++) {
        await relay.post({ type: 'chat', message: 'followed live' }, relay.headers(alice, key, CH));
        await Promise.race([seen, new Promise((r) => setTimeout(r, 100))]);
      }
    })();
    await seen;
    await publisher;
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const messages = jsonLines(out).map((e) => e.data['message'] ?? e.data.type);
    expect(messages.slice(0, 3)).toEqual(['hello from alice', 'presence', 'hello from bob']);
    expect(messages.slice(3).every((m) => m === 'followed live')).toBe(true);
  });
});

describe('relay tail and relay stats', () => {
  it('tail --since shows every channel, naming each', async () => {
    const r = await runCli(['tail', '--since', '1h', '--limit', '4'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`  ${OTHER}  `);
    expect(r.stdout).toContain(`  ${CH}  `);
  });

  // Issue 21: tail said nothing while it connected, and what was posted meanwhile was never shown.
  it('tail says on stderr when it is listening, and shows a payload posted right after that line', async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('../bin/relay.js', import.meta.url)), 'tail', '--json'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    let out = '';
    let err = '';
    const listening = new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('Listening')) resolve();
      });
    });
    const shown = new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('posted once, after the line')) resolve();
      });
    });
    // Killed however the test ends: a tail that never says it listens would otherwise outlive it.
    onTestFinished(() => void child.kill('SIGKILL'));
    await listening;
    expect(err).toMatch(/^Listening: payloads are shown as they are stored; Ctrl-C to stop\.\n$/);
    expect((await relay.post({ type: 'chat', message: 'posted once, after the line' }, relay.headers(alice, key, LIVE))).status).toBe(200);
    await shown;
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(jsonLines(out).map((e) => [e.meta.channel, e.data['message']])).toEqual([[LIVE, 'posted once, after the line']]);
  });

  it('stats prints size, retention and messages per channel', async () => {
    const r = await runCli(['stats', '--json'], env);
    expect(r.code).toBe(0);
    const stats = JSON.parse(r.stdout) as { messages: number; retention: { maxAgeMs: number; maxBytes: number; replicas: number; storage: string }; channels: Array<{ channel: string; messages: number }> };
    expect(stats.retention).toEqual({ maxAgeMs: 24 * 3_600_000, maxBytes: 1024 ** 3, replicas: 1, storage: 'file' });
    expect(stats.channels).toEqual(expect.arrayContaining([{ channel: CH, messages: expect.any(Number) }, { channel: OTHER, messages: 1 }]));
    const human = await runCli(['stats'], env);
    expect(human.stdout).toMatch(/retention: max age 1d, max size 1\.0 GiB, 1 replica\(s\), file storage/);
    expect(human.stdout).toMatch(new RegExp(`${OTHER.replace(/\./g, '\\.')}\\s+1`));
  });
});
