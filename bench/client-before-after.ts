// npm run bench:client [-- --quick]
// The figures of issue 10, before and after the client library, against a real relay (nats-server,
// a profile API over HTTP, the relay on a fixed port, restarted on the same NATS):
//  - frames lost across a relay restart, of 25 posted around it (one every 250 ms, the relay stopped
//    after the 10th and started again DOWNTIME_MS later; the sender resends until each is stored);
//  - stream opens in a minute while two copies of one account run on one server.
// "Before" is a client behaving like the published StasisProxy module (bench/lib/stasis-like-client.ts);
// "after" is @channel-relay/client with its defaults.

import { RelayClient } from '../clients/typescript/src/index.js';
import type { CreatedKey } from '../services/core/keys.js';
import { pollUntil } from '../tools/poll.js';
import { freePort } from '../tools/ports.js';
import { readMetrics } from '../test/helpers/metrics.js';
import { startTestNats, type TestNats } from '../test/helpers/nats.js';
import { startProfileApi, type FakeProfileApi } from '../test/helpers/profile-api.js';
import { RelayFixture, type Player } from '../test/helpers/relay.js';
import { table } from './lib/report.js';
import { StasisLikeClient } from './lib/stasis-like-client.js';

const quick = process.argv.includes('--quick');
const RESTART_TRIALS = quick ? 1 : 3;
const EVICTION_WINDOW_MS = quick ? 20_000 : 60_000;
const FRAMES = 25;
const RESTART_AFTER = 10;
const DOWNTIME_MS = 1000;
const SPACING_MS = 250;
const AGENT = 'bench/1.0.0+0000000000000000000000000000000000000000';

type Kind = 'before' | 'after';

interface Consumer {
  /** Resolves once the first stream is open. */
  ready(): Promise<void>;
  chats: string[];
  opens(): number;
  stop(): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function consumer(kind: Kind, url: string, key: CreatedKey, player: Player, server: string): Consumer {
  const chats: string[] = [];
  if (kind === 'before') {
    const c = new StasisLikeClient({
      url,
      server,
      clientId: key.clientId,
      clientSecret: key.clientSecret,
      token: player.token,
      userAgent: AGENT,
      onPayload: (p) => {
        if (p.type === 'chat') chats.push(String(p['message']));
      },
    });
    c.start();
    return { ready: async () => void (await pollUntil(() => c.opens > 0, { timeoutMs: 10_000, intervalMs: 20 })), chats, opens: () => c.opens, stop: () => c.stop() };
  }
  const c = new RelayClient({ url, server, clientId: key.clientId, clientSecret: key.clientSecret, userAgent: AGENT, token: () => player.token });
  let opens = 0;
  c.on('state', (s) => void (s.state === 'open' && opens++));
  c.on('payload', ({ payload }) => void (payload.type === 'chat' && chats.push(typeof payload.message === 'string' ? payload.message : JSON.stringify(payload.message))));
  const connected = c.connect();
  return { ready: () => connected, chats, opens: () => opens, stop: () => c.close() };
}

interface RestartResult {
  lost: number;
  duplicates: number;
  reopens: number;
}

async function restartTrial(kind: Kind, nats: TestNats, profile: FakeProfileApi, trial: number): Promise<RestartResult> {
  const port = await freePort();
  const env = { PORT: String(port) };
  let relay = await RelayFixture.start({ nats, profile, env });
  const url = `http://127.0.0.1:${port}`;
  const key = await relay.createKey();
  const server = `restart-${kind}-${trial}.example.net`;
  const c = consumer(kind, url, key, relay.player(), server);
  await c.ready();
  const senderPlayer = relay.player();
  const sender = new RelayClient({ url, server, clientId: key.clientId, clientSecret: key.clientSecret, userAgent: AGENT, token: () => senderPlayer.token, backoff: { baseMs: 50, capMs: 250 }, sendAttempts: 1000 });
  let restarted: Promise<void> = Promise.resolve();
  for (let i = 0; i < FRAMES; i++) {
    await sender.send({ type: 'chat', message: `frame ${i}` });
    if (i === RESTART_AFTER - 1) {
      restarted = (async () => {
        await relay.close();
        await sleep(DOWNTIME_MS);
        relay = await RelayFixture.start({ nats, profile, env });
      })();
    }
    await sleep(SPACING_MS);
  }
  await restarted;
  // Whatever is coming has come within the back-off cap of either client (a trial that times out
  // records what it saw).
  await pollUntil(() => c.chats.includes(`frame ${FRAMES - 1}`), { timeoutMs: 35_000, intervalMs: 20 });
  await sleep(500);
  const got = c.chats.filter((m) => m.startsWith('frame '));
  const result = { lost: FRAMES - new Set(got).size, duplicates: got.length - new Set(got).size, reopens: c.opens() - 1 };
  c.stop();
  sender.close();
  await relay.close();
  return result;
}

interface EvictionResult {
  opens: number;
  evictions: number;
  presenceStored: number;
}

async function evictionTrial(kind: Kind, nats: TestNats, profile: FakeProfileApi): Promise<EvictionResult> {
  const relay = await RelayFixture.start({ nats, profile });
  const key = await relay.createKey();
  const player = relay.player();
  const server = `evict-${kind}.example.net`;
  const m0 = await readMetrics(relay.url);
  const first = consumer(kind, relay.url, key, player, server);
  await first.ready();
  const second = consumer(kind, relay.url, key, player, server);
  await sleep(EVICTION_WINDOW_MS);
  const m1 = await readMetrics(relay.url);
  first.stop();
  second.stop();
  await relay.close();
  const delta = (name: string): number => (m1.get(name) ?? 0) - (m0.get(name) ?? 0);
  return {
    opens: delta('relay_streams_opened_total'),
    evictions: delta('relay_evictions_total'),
    // Every "before" open is followed by a presence POST; the library posts only what the game gives it.
    presenceStored: delta('relay_entries_published_total{type="presence"}'),
  };
}

const nats = await startTestNats();
const profile = await startProfileApi();
const log = (line: string): void => void process.stderr.write(`${line}\n`);
try {
  const restarts: Record<Kind, RestartResult[]> = { before: [], after: [] };
  for (let t = 0; t < RESTART_TRIALS; t++) {
    for (const kind of ['before', 'after'] as const) {
      const r = await restartTrial(kind, nats, profile, t);
      log(`restart trial ${t + 1} ${kind}: lost ${r.lost} of ${FRAMES}, duplicates ${r.duplicates}, reopens ${r.reopens}`);
      restarts[kind].push(r);
    }
  }
  const evictions: Partial<Record<Kind, EvictionResult>> = {};
  for (const kind of ['before', 'after'] as const) {
    log(`eviction ${kind}: two copies of one account for ${EVICTION_WINDOW_MS / 1000} s`);
    evictions[kind] = await evictionTrial(kind, nats, profile);
  }
  const list = (xs: number[]): string => xs.join(', ');
  const rows = (['before', 'after'] as const).map((kind) => {
    const r = restarts[kind];
    const e = evictions[kind]!;
    return [
      kind === 'before' ? 'before (StasisProxy-like)' : 'after (@channel-relay/client)',
      list(r.map((x) => x.lost)),
      list(r.map((x) => x.duplicates)),
      list(r.map((x) => x.reopens)),
      String(e.opens),
      String(e.evictions),
      String(e.presenceStored),
    ];
  });
  process.stdout.write(
    `\nRelay restart: ${FRAMES} chats, one every ${SPACING_MS} ms, the relay stopped after the ${RESTART_AFTER}th and started ${DOWNTIME_MS} ms later on the same port and NATS (${RESTART_TRIALS} trial(s)).\n` +
      `Two copies of one account on one server, watched for ${EVICTION_WINDOW_MS / 1000} s.\n\n` +
      table(['client', 'frames lost of 25, per trial', 'duplicates', 'opens after the restart', `stream opens in ${EVICTION_WINDOW_MS / 1000} s, two copies`, 'evictions', 'presence snapshots stored'], rows) +
      '\n',
  );
} finally {
  await profile.close();
  await nats.stop();
}
