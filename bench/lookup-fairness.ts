// npx tsx bench/lookup-fairness.ts [--flood N] [--players N] [--delay MS]
// A player's first request (a new session: one profile API look-up) from address B, with and without
// a flood of made-up tokens carrying the public client credentials from address A, the profile API
// answering in a fixed time. Fairness by address means the flood costs the player nothing beyond the
// profile API's own latency. Real relay, real nats-server, real fake profile API; about 30 s.

import { postFrom, type PostResult } from '../test/helpers/clients.js';
import { RelayFixture } from '../test/helpers/relay.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const FLOOD = arg('flood', 1200);
const PLAYERS = arg('players', 20);
const DELAY_MS = arg('delay', 200);
const FLOODER = '127.0.0.2';
const PLAYER = '127.0.0.3';
const chat = { type: 'chat', message: 'hello' };

const relay = await RelayFixture.start({ env: { LOG_LEVEL: 'warn' } });
relay.profile.setDelay(DELAY_MS);
const key = await relay.createKey();
const ch = 'bench-fairness.example.net';

/** Each player once: a new session, so one look-up; latency in ms and the status. */
async function players(): Promise<{ ms: number[]; statuses: Map<number, number> }> {
  const ms: number[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < PLAYERS; i++) {
    const p = relay.player();
    const t0 = performance.now();
    const r = await postFrom(PLAYER, relay.url, chat, relay.headers(p, key, ch));
    ms.push(performance.now() - t0);
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  }
  return { ms, statuses };
}

/** FLOOD requests always in flight from one address, each a new made-up token with the public credentials. */
function flood(): { stop: () => Promise<Map<number, number>> } {
  let running = true;
  let n = 0;
  const statuses = new Map<number, number>();
  const worker = async (): Promise<void> => {
    while (running) {
      const r: PostResult | null = await postFrom(FLOODER, relay.url, chat, { ...relay.headers(null, key, ch), authorization: `Bearer junk-${++n}` }).catch(() => null);
      const s = r?.status ?? 0;
      statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
  };
  const workers = Array.from({ length: FLOOD }, worker);
  return {
    stop: async () => {
      running = false;
      await Promise.all(workers);
      return statuses;
    },
  };
}

const summary = (ms: number[]): string => {
  const s = [...ms].sort((a, b) => a - b);
  const q = (f: number): string => s[Math.min(s.length - 1, Math.floor(f * s.length))]!.toFixed(0);
  return `median ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${s.at(-1)!.toFixed(0)} ms`;
};
const counts = (m: Map<number, number>): string => [...m].sort(([a], [b]) => a - b).map(([s, c]) => `${s}: ${c}`).join(', ');

try {
  const quiet = await players();
  const f = flood();
  // Let the flood fill what it may before the players come.
  await new Promise((r) => setTimeout(r, 1000));
  const flooded = await players();
  const floodStatuses = await f.stop();
  process.stdout.write(
    [
      `profile API latency ${DELAY_MS} ms; ${PLAYERS} players from ${PLAYER}, one after another, each a new session`,
      `without flood: ${summary(quiet.ms)}; statuses ${counts(quiet.statuses)}`,
      `with ${FLOOD} junk tokens in flight from ${FLOODER} (public credentials): ${summary(flooded.ms)}; statuses ${counts(flooded.statuses)}`,
      `flood answers: ${counts(floodStatuses)}`,
    ].join('\n') + '\n',
  );
} finally {
  await relay.close();
}
