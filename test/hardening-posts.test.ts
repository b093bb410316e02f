// Hardening of POST: nothing half-done, counts that are true, history that one account cannot wipe.
// Each test is one attack or careless client, with a line on what it guards. Real nats-server,
// real HTTP, SSE over sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { channelSubject, STREAM_NAME } from '../services/core/subjects.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { RelayFixture } from './helpers/relay.js';
import { freeze } from './helpers/nats.js';

let relay: RelayFixture;
let key: CreatedKey;
let bridge: CreatedKey;
let n = 0;
const channel = (): string => `post-hardening-${++n}.example.net`;
const chat = (message: string): { type: 'chat'; message: string } => ({ type: 'chat', message });
/** A payload of about `bytes` bytes (chat is capped lower by its own schema). */
const bulky = (bytes: number, message = 'bulk'): Record<string, unknown> => ({ type: 'minigame', game: message, gamedata: 'x'.repeat(bytes) });

beforeAll(async () => {
  relay = await RelayFixture.start();
  key = await relay.createKey();
  bridge = await relay.createKey([Scope.Unauthenticated, Scope.Send, Scope.Establish, Scope.Receive]);
});
afterAll(async () => {
  await relay?.close();
});

/** The messages the log holds for a channel, oldest first. */
async function stored(r: RelayFixture, ch: string): Promise<string[]> {
  const jsm = r.server.core.nats.jsm;
  const out: string[] = [];
  const info = await jsm.streams.info(STREAM_NAME, { subjects_filter: channelSubject(ch) });
  if ((info.state.subjects?.[channelSubject(ch)] ?? 0) === 0) return out;
  const consumer = await r.server.core.nats.js.consumers.get(STREAM_NAME, { filter_subjects: channelSubject(ch) });
  const messages = await consumer.consume();
  for await (const m of messages) {
    const data = m.json<{ message?: unknown; game?: unknown }>();
    out.push(String(data.message ?? data.game));
    if (m.info.pending === 0) break;
  }
  await messages.close();
  return out;
}

describe('a batch is all or nothing', () => {
  // Guards: an agent with CR/LF in the third envelope answered 500 after the first two were delivered.
  it('an envelope agent with a line break is a 400 and nothing of the batch is delivered', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const user = relay.player().uuid;
    const res = await relay.post(
      [
        { user, agent: 'bridge/1', message: chat('one') },
        { user, agent: 'bridge/1', message: chat('two') },
        { user, agent: 'bridge/1\r\nRelay-Sender: forged', message: chat('three') },
      ],
      relay.headers(null, bridge, ch),
    );
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('invalid_payload');
    expect(res.body['details']).toEqual([expect.objectContaining({ entry: 2 })]);
    await relay.post(chat('sentinel'), relay.headers(relay.player(), key, ch));
    expect((await s.nextPair()).data.message).toBe('sentinel');
  });

  // Guards: an entry over NATS's max_payload (but under BODY_LIMIT) was a 503 for ever, and each
  // retry stored the entries before it again.
  it('an entry too large for the event log is a 413 entry_too_large naming it, and nothing is stored', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { BODY_LIMIT: '4MiB', ENTRY_MAX_BYTES: '4MiB' } });
    try {
      const k = await own.createKey();
      const ch = channel();
      const res = await own.post([chat('small'), bulky(1024 * 1024 + 10)], own.headers(own.player(), k, ch));
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ error: 'entry_too_large', details: [expect.objectContaining({ entry: 1 })] });
      expect(await stored(own, ch)).toEqual([]);
    } finally {
      await own.close();
    }
  });

  // Guards: single entries far larger than anything a client sends fill the log; ENTRY_MAX_BYTES bounds them.
  it('an entry over ENTRY_MAX_BYTES is a 413 entry_too_large', async () => {
    const res = await relay.post(bulky(70 * 1024), relay.headers(relay.player(), key, channel()));
    expect(res.status).toBe(413);
    expect(res.body['error']).toBe('entry_too_large');
  });
});

describe('a publish that fails part-way', () => {
  // Guards: a frozen nats-server made the answer say "the first 0 entries were stored" when all were,
  // and entries after a failure were still sent.
  it('stops at the first entry without an acknowledgement and reports exactly what may be stored', async () => {
    const own = await RelayFixture.start({ profile: relay.profile, env: { PUBLISH_TIMEOUT: '500ms' } });
    try {
      const k = await own.createKey();
      const ch = channel();
      const p = own.player();
      expect((await own.post(chat('warm-up'), own.headers(p, k, ch))).status).toBe(200);
      // A frozen server: it takes the bytes but answers nothing until it runs again.
      const thaw = await freeze(own.nats.node!);
      let res;
      try {
        res = await own.post([chat('a'), chat('b'), chat('c')], own.headers(p, k, ch));
      } finally {
        thaw();
      }
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: 'publish_failed', accepted: 0, unknown: 1 });
      expect(String(res.body['message'])).toMatch(/entry 0 may or may not have been stored/);
      // Once the server runs again, the log holds at most the entry reported unknown: b and c were never sent.
      await own.post(chat('after'), own.headers(p, k, ch));
      const log = await stored(own, ch);
      expect(log.filter((m) => m === 'b' || m === 'c')).toEqual([]);
      expect(log.at(-1)).toBe('after');
    } finally {
      await own.close();
    }
  });
});

describe('Idempotency-Key', () => {
  // Guards: resending "the rest" under the same key was acknowledged as duplicates: one entry never
  // stored, another stored twice, answer 200.
  it('names one request: another body under the same key is 422 idempotency_key_reused and stores nothing', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const p = relay.player();
    const h = relay.headers(p, key, ch, { 'idempotency-key': 'one-request' });
    expect((await relay.post([chat('1'), chat('2'), chat('3')], h)).body).toEqual({ accepted: 3, dropped: 0 });
    const rest = await relay.post([chat('2'), chat('3')], h);
    expect(rest.status).toBe(422);
    expect(rest.body['error']).toBe('idempotency_key_reused');
    // The same request again is answered as the first time, and stores nothing twice.
    expect((await relay.post([chat('1'), chat('2'), chat('3')], h)).body).toEqual({ accepted: 3, dropped: 0 });
    await relay.post(chat('sentinel'), relay.headers(p, key, ch));
    const got = await s.pairsUntil((x) => x.data.message === 'sentinel');
    expect(got.map((x) => x.data.message)).toEqual(['1', '2', '3', 'sentinel']);
  });
});

describe('the channel of a POST', () => {
  // Guards: a repeated ?host= was a 500.
  it('named twice with ?host= is refused with 400 invalid_channel', async () => {
    const res = await relay.post(chat('x'), relay.headers(relay.player(), key), '/?host=a.example.net&host=b.example.net');
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('invalid_channel');
  });
});

describe('history and fairness', () => {
  // Guards: the rate limit counted entries, not bytes: a few huge entries a second went through.
  it('payload bytes per account are limited: 429 rate_limited, another account unaffected', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { RATE_LIMIT_BYTES_PER_SECOND: '10KiB', RATE_LIMIT_BYTES_BURST: '100KiB' } });
    try {
      const k = await own.createKey();
      const ch = channel();
      const greedy = own.player();
      const big = chat('z'.repeat(30 * 1024));
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await own.post(big, own.headers(greedy, k, ch)));
      expect(answers.slice(0, 3).map((a) => a.status)).toEqual([200, 200, 200]);
      expect(answers[3]!.status).toBe(429);
      expect(answers[3]!.body).toMatchObject({ error: 'rate_limited', message: expect.stringMatching(/bytes/) });
      expect(Number(answers[3]!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await own.post(big, own.headers(own.player(), k, ch))).status).toBe(200);
    } finally {
      await own.close();
    }
  });

  // Guards: 80 large entries in one channel pushed every other channel's frames out of the log.
  it('a flood in one channel ages out only that channel’s history', async () => {
    const own = await RelayFixture.start({
      env: { STREAM_MAX_BYTES: '2MiB', STREAM_MAX_MSGS_PER_CHANNEL: '20', RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_BYTES_PER_SECOND: '0' },
    });
    try {
      const k = await own.createKey();
      const quiet = channel();
      const loud = channel();
      const q = own.player();
      for (const m of ['q1', 'q2', 'q3']) expect((await own.post(chat(m), own.headers(q, k, quiet))).status).toBe(200);
      const flooder = own.player();
      const big = bulky(40 * 1024, 'flood');
      for (let i = 0; i < 10; i++) {
        expect((await own.post(Array.from({ length: 10 }, () => big), own.headers(flooder, k, loud))).status).toBe(200);
      }
      expect(await stored(own, quiet)).toEqual(['q1', 'q2', 'q3']);
      expect((await stored(own, loud)).length).toBe(20);
    } finally {
      await own.close();
    }
  });
});

describe('bans and bridges', () => {
  // Guards: a bridge could give a banned account its voice back (in any UUID spelling).
  it('an envelope naming a banned account is not delivered and is counted in dropped', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const banned = relay.player();
    await relay.server.core.bans.ban(banned.uuid, { reason: 'test', by: 'test' });
    await eventually(() => relay.server.core.bans.activeBan(banned.uuid) !== undefined, 'the ban in the mirror');
    const free = relay.player();
    const res = await relay.post(
      [
        { user: banned.uuid.replace(/-/g, '').toUpperCase(), agent: 'bridge', message: chat('from the banned') },
        { user: free.uuid, agent: 'bridge', message: chat('from the free') },
      ],
      relay.headers(null, bridge, ch),
    );
    expect(res.body).toEqual({ accepted: 1, dropped: 1 });
    const pair = await s.nextPair();
    expect([pair.meta.uuid, pair.data.message]).toEqual([free.uuid, 'from the free']);
  });
});

