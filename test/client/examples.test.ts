// The examples in clients/typescript/examples/ run as their README says (tsx, as separate processes)
// and do their job against a real relay: the chat bot answers !ping in the channel and privately,
// the bridge relays standard input to several servers as one player.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../clients/typescript/src/index.js';
import type { CreatedKey } from '../../services/core/keys.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { CLIENT_AGENT, Recorder } from '../helpers/relay-client.js';
import { RelayFixture, type Player } from '../helpers/relay.js';

const EXAMPLES = fileURLToPath(new URL('../../clients/typescript/examples/', import.meta.url));
const TSX = import.meta.resolve('tsx');

let relay: RelayFixture;
let key: CreatedKey;
const clients: RelayClient[] = [];
const children: ChildProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  relay = await RelayFixture.start();
  key = await relay.createKey(ALL_SCOPES);
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  for (const p of children.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(async () => {
  await relay?.close();
});

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once `pattern` shows up in what the process wrote (stdout or stderr). */
  output(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

function run(example: string, env: Record<string, string>, cwd: string): Running {
  const child = spawn(process.execPath, ['--import', TSX, join(EXAMPLES, example)], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  let waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const poke = (): void => {
    const ready = waiters.filter((w) => w.pattern.test(out) || w.pattern.test(err));
    waiters = waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  };
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
    poke();
  });
  child.stderr.on('data', (b: Buffer) => {
    err += b.toString();
    poke();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    output(pattern, timeoutMs = 20_000) {
      if (pattern.test(out) || pattern.test(err)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${example} did not print ${pattern} within ${timeoutMs} ms.\nstdout: ${out}\nstderr: ${err}`)), timeoutMs);
        waiters.push({ pattern, resolve: () => (clearTimeout(timer), resolve()) });
        void exited.then((code) => reject(new Error(`${example} exited with ${code} before printing ${pattern}.\nstdout: ${out}\nstderr: ${err}`)));
      });
    },
  };
}

async function player(server: string): Promise<{ client: RelayClient; rec: Recorder; who: Player }> {
  const who = relay.player();
  const client = new RelayClient({ url: relay.url, server, clientId: key.clientId, clientSecret: key.clientSecret, userAgent: CLIENT_AGENT, token: () => who.token });
  clients.push(client);
  const rec = new Recorder(client);
  await client.connect();
  return { client, rec, who };
}

describe('clients/typescript/examples', () => {
  it('chat-bot.ts, with its key read from .data/dev-key.json as after npm start, prints what it hears and answers !ping in the channel and privately', async () => {
    // The bot's working directory holds the key where `npm start` writes it; no key in the environment.
    const cwd = mkdtempSync(join(tmpdir(), 'chat-bot-'));
    dirs.push(cwd);
    mkdirSync(join(cwd, '.data'));
    writeFileSync(join(cwd, '.data', 'dev-key.json'), JSON.stringify(key));
    const botPlayer = relay.player('PingBot');
    const server = 'bot.example.net';
    const bot = run('chat-bot.ts', { RELAY_URL: relay.url, RELAY_SERVER: server, RELAY_TOKEN: botPlayer.token }, cwd);
    await bot.output(/is listening on bot\.example\.net/);

    const { client, rec, who } = await player(server);
    await client.send({ type: 'chat', message: 'hello bot' });
    await bot.output(/hello bot/);
    expect(bot.stdout()).toContain(`[${server}] ${who.uuid}: hello bot`);

    await client.send({ type: 'chat', message: '!ping' });
    await rec.until(() => rec.frames.some((f) => f.payload.type === 'chat' && f.payload.message === 'pong'), 'pong in the channel');
    expect(rec.frames.find((f) => f.payload.type === 'chat' && f.payload.message === 'pong')!.meta.uuid).toBe(botPlayer.uuid);

    await client.send({ type: 'message', to: botPlayer.uuid, message: '!ping' });
    await rec.until(() => rec.frames.some((f) => f.payload.type === 'message' && f.payload.message === 'pong'), 'a private pong');
    const privately = rec.frames.find((f) => f.payload.type === 'message' && f.payload.message === 'pong')!;
    expect(privately.payload).toEqual({ type: 'message', message: 'pong', to: who.uuid });
    expect(privately.meta.uuid).toBe(botPlayer.uuid);

    // Ctrl-C: the bot closes its stream and the process ends by itself.
    bot.child.kill('SIGINT');
    expect(await bot.exited).toBe(0);
  });

  it('bridge.ts relays each line of standard input to every server it names, as the bridge user, and ends with its input', async () => {
    const [a, b] = [await player('a.example.net'), await player('b.example.net')];
    const user = '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3';
    const bridge = run(
      'bridge.ts',
      { RELAY_URL: relay.url, RELAY_CLIENT_ID: key.clientId, RELAY_CLIENT_SECRET: key.clientSecret, RELAY_SERVERS: 'a.example.net,b.example.net', BRIDGE_USER: user, BRIDGE_AGENT: 'example-bridge/1' },
      process.cwd(),
    );
    await bridge.output(/bridging standard input/);
    bridge.child.stdin!.write('first line\n\nsecond line\n');
    for (const p of [a, b]) await p.rec.until(() => p.rec.chats().length === 2, 'both lines');
    for (const [p, server] of [[a, 'a.example.net'], [b, 'b.example.net']] as const) {
      expect(p.rec.chats()).toEqual(['first line', 'second line']);
      expect(p.rec.frames.find((f) => f.payload.type === 'chat')!.meta).toEqual({ uuid: user, agent: 'example-bridge/1', channel: server });
    }
    // What players say on those servers comes back out of the bridge.
    await a.client.send({ type: 'chat', message: 'hello bridge' });
    await bridge.output(/\[a\.example\.net\] .*: hello bridge/);
    bridge.child.stdin!.end();
    expect(await bridge.exited).toBe(0);
    expect(bridge.stderr()).toMatch(/sent to 2 of 2 servers/);
  });
});
