// Setting up is an operator's act (DESIGN.md section 7): `relay setup` creates the relay's streams and
// buckets and applies the operator's limits, and says what it did; the services start against what
// exists, stop with one sentence when something they need is missing or unusable, and warn when a
// limit differs from one they were given.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscardPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { loadConfig } from '../services/core/config.js';
import { natsLayout } from '../services/core/nats-layout.js';
import { BUCKET_STREAMS, STREAM_NAME } from '../services/core/subjects.js';
import { startRelayServer } from '../services/server.js';
import { runCli } from './helpers/cli.js';
import { startTestNats, type TestNats } from './helpers/nats.js';
import { setUpNats } from './helpers/nats-setup.js';
import { LogCapture, RelayFixture } from './helpers/relay.js';

let nats: TestNats;
let nc: NatsConnection;
let jsm: JetStreamManager;
const STREAMS = natsLayout(loadConfig('all', {})).map((p) => p.stream);

beforeEach(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
});

afterEach(async () => {
  await nc.close();
  await nats.stop();
});

async function streamNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const name of jsm.streams.names()) names.push(name);
  return names.sort();
}

function startService(service: 'ingress' | 'gateway', env: Record<string, string> = {}): Promise<unknown> {
  return startRelayServer({ service, env: { NATS_URL: nats.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', PROFILE_API_URL: 'offline', ...env } });
}

describe('relay setup', () => {
  it('creates every stream and bucket on an empty server and says so; run again, it changes nothing', async () => {
    const first = await runCli(['setup'], { NATS_URL: nats.url });
    expect(first.code, first.stderr).toBe(0);
    expect(await streamNames()).toEqual([...STREAMS].sort());
    expect(first.stdout).toMatch(/created +the event log \(stream RELAY\)/);
    expect(first.stdout).toMatch(/8 of 8 changed/);
    expect(first.stdout).toMatch(/Durability: event log R1, buckets R1, nats-server 2\.\d+\.\d+: an acknowledged POST survives a crash/);
    const again = await runCli(['setup'], { NATS_URL: nats.url });
    expect([again.code, again.stdout]).toEqual([0, expect.stringMatching(/Nothing to change: every stream and bucket is as configured\./)]);
  }, 60_000);

  it('--dry-run says what it would create and creates nothing', async () => {
    const r = await runCli(['setup', '--dry-run'], { NATS_URL: nats.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/would be created +the event log/);
    expect(await streamNames()).toEqual([]);
  }, 60_000);

  it("brings an existing bucket to the operator's setting and names the old value, the new one and the variable", async () => {
    await setUpNats(nats.url);
    const r = await runCli(['setup', '--json'], { NATS_URL: nats.url, CLAIM_TTL: '2h' });
    expect(r.code, r.stderr).toBe(0);
    const claims = (JSON.parse(r.stdout) as { streams: Array<{ stream: string; action: string; changes: string[] }> }).streams.find((s) => s.stream === `KV_${BUCKET_STREAMS}`);
    expect(claims).toMatchObject({ action: 'updated', changes: ['max age 1h -> 2h (CLAIM_TTL)'] });
    expect((await jsm.streams.info(`KV_${BUCKET_STREAMS}`)).config.max_age).toBe(2 * 3600 * 1e9);
  }, 60_000);

  it('undoes limits written behind its back (a max_msgs of 1 on the event log) and keeps what is stored', async () => {
    await setUpNats(nats.url);
    const config = (await jsm.streams.info(STREAM_NAME)).config;
    await jsm.streams.update(STREAM_NAME, { ...config, max_msgs: 1 });
    const r = await runCli(['setup'], { NATS_URL: nats.url });
    expect(r.stdout).toMatch(/updated +the event log \(stream RELAY\): max messages 1 -> unbounded/);
    expect((await jsm.streams.info(STREAM_NAME)).config.max_msgs).toBe(-1);
  }, 60_000);
});

describe('a service starts against what exists', () => {
  it.each(['ingress', 'gateway'] as const)('a %s started before relay setup stops with one sentence naming what is missing and how to create it', async (service) => {
    await expect(startService(service)).rejects.toThrow(/The event log \(stream RELAY\) does not exist: run `relay setup` with the operator's NATS credentials/);
    // It created nothing itself.
    expect(await streamNames()).toEqual([]);
  });

  it('a gateway stops when the event log does not republish to the live subjects, which delivery rides on; setup says it cannot mend that', async () => {
    // An event log made by hand, without the RePublish (which JetStream cannot add to it later).
    await jsm.streams.add({ name: STREAM_NAME, subjects: ['channel.>'] });
    const outcomes = await setUpNats(nats.url);
    expect(outcomes.find((o) => o.stream === STREAM_NAME)?.notes).toEqual([expect.stringMatching(/does not republish channel\.> to live\.channel\.> with the payloads, and JetStream cannot change that in place/)]);
    await expect(startService('gateway')).rejects.toThrow(/The event log \(stream RELAY\) does not republish channel\.> to live\.channel\.>.*relay setup/);
  });

  // Found by an attack pass: each of these got past relay setup and the start-up checks.
  it.each([
    ['kept by interest, where every POST was answered 200 and nothing stored', { retention: 'interest' }, /keeps messages by interest, not by limits/],
    ['kept as a work queue, where every read of the log failed', { retention: 'workqueue' }, /keeps messages by workqueue, not by limits/],
    ['republishing headers only, where every live frame had an empty data line', { republish: { src: 'channel.>', dest: 'live.channel.>', headers_only: true } }, /republishes headers only/],
  ])('an event log %s stops start-up with one sentence (JetStream cannot mend it in place)', async (_name, config, sentence) => {
    await jsm.streams.add({ name: STREAM_NAME, subjects: ['channel.>'], republish: { src: 'channel.>', dest: 'live.channel.>' }, allow_direct: true, ...config } as Parameters<typeof jsm.streams.add>[0]);
    expect((await setUpNats(nats.url)).find((o) => o.stream === STREAM_NAME)?.notes).toEqual([expect.stringMatching(/cannot change that in place/)]);
    await expect(startService('gateway')).rejects.toThrow(sentence);
  });

  it.each([
    ['allowing roll-up headers, where one publish cut the log to its last message', { allow_rollup_hdrs: true }, /allows roll-up headers, with which one publish on any of its subjects erases every other/],
    ['refusing messages over 200 bytes, where every POST failed', { max_msg_size: 200 }, /refuses messages larger than 200 bytes/],
  ])('an event log %s stops start-up with one sentence, and relay setup mends it', async (_name, config, sentence) => {
    await setUpNats(nats.url);
    await jsm.streams.update(STREAM_NAME, { ...(await jsm.streams.info(STREAM_NAME)).config, ...config });
    await expect(startService('gateway')).rejects.toThrow(sentence);
    await setUpNats(nats.url);
    const relay = await RelayFixture.start({ service: 'gateway', nats, setup: false });
    await relay.close();
  });

  it('a bucket that allows roll-up headers (as the KV client makes them) is changed by relay setup to refuse them', async () => {
    await jsm.streams.add({ name: 'KV_relay-bans', subjects: ['$KV.relay-bans.>'], allow_rollup_hdrs: true, allow_direct: true, max_msgs_per_subject: 5, discard: DiscardPolicy.New });
    const outcome = (await setUpNats(nats.url)).find((o) => o.stream === 'KV_relay-bans');
    expect(outcome?.changes).toContain('refuse roll-up headers (one publish could erase every subject)');
    expect((await jsm.streams.info('KV_relay-bans')).config.allow_rollup_hdrs).toBe(false);
  });

  it('a sealed event log stops start-up with one sentence saying it cannot be unsealed', async () => {
    await setUpNats(nats.url);
    const config = (await jsm.streams.info(STREAM_NAME)).config;
    await jsm.streams.update(STREAM_NAME, { ...config, sealed: true } as typeof config);
    await expect(startService('ingress')).rejects.toThrow(/The event log \(stream RELAY\) is sealed.*cannot unseal/);
  });

  it('a limit that differs from one the service was given is a warning, and the service starts with what the stream has', async () => {
    await setUpNats(nats.url);
    const relay = await RelayFixture.start({ service: 'gateway', nats, setup: false, env: { STREAM_MAX_AGE: '7d', CLAIM_TTL: '3h' } });
    try {
      expect(relay.logs.text).toMatch(/STREAM_MAX_AGE asks for max age 7d, but the event log \(stream RELAY\) has 1d: this process uses what the stream has; run `relay setup` with STREAM_MAX_AGE/);
      expect(relay.logs.text).toMatch(/CLAIM_TTL asks for max age 3h, but bucket relay-streams has 1h/);
      // It changed nothing.
      expect((await jsm.streams.info(STREAM_NAME)).config.max_age).toBe(86_400 * 1e9);
    } finally {
      await relay.close();
    }
  });

  it('logs at start, in one line, which guarantee an acknowledged POST has on the NATS it reached', async () => {
    await setUpNats(nats.url);
    const logs = new LogCapture();
    const server = await startRelayServer({ service: 'ingress', env: { NATS_URL: nats.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_PRETTY: 'false', PROFILE_API_URL: 'offline' }, logDestination: logs });
    try {
      const line = logs.lines.map((l) => JSON.parse(l) as { msg: string; durability?: unknown }).find((l) => l.durability !== undefined);
      expect(line?.msg).toMatch(/^event log R1, buckets R1, nats-server 2\.9\.\d+: .*power loss of the NATS machine may lose what was acknowledged in the last 60 s/);
    } finally {
      await server.close();
    }
  });
});

describe('relay config check', () => {
  it('says which guarantee an acknowledged POST has on the NATS it reaches, the line services log at start', async () => {
    await setUpNats(nats.url);
    const r = await runCli(['config', 'check', 'ingress'], { NATS_URL: nats.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^NATS: event log R1, buckets R1, nats-server 2\.9\.\d+: an acknowledged POST survives/m);
  }, 60_000);

  it('exits 1 naming what relay setup has not made, though the configuration itself is valid', async () => {
    const r = await runCli(['config', 'check', 'gateway'], { NATS_URL: nats.url });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/The gateway configuration is valid\.\nNATS: The event log \(stream RELAY\) does not exist: run `relay setup`/);
  }, 60_000);
});
