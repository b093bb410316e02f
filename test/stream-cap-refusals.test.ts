// An open refused over its owner's stream cap: the client gets a 429 and the relay keeps nothing of
// it, and above all it takes nothing from the streams the account holds (a reopen of a held channel
// is refused only when the account is counted over its cap, and must not evict the stream it would
// have replaced: an attempt to ask the census while writing the claim did, and was reverted).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil as eventually } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

let a: RelayFixture;
let b: RelayFixture;

beforeAll(async () => {
  a = await RelayFixture.start({ env: { MAX_STREAMS_PER_ACCOUNT: '3' } });
  // A gateway with a lower cap (a cap being lowered in a rolling restart): it counts the account over it.
  b = await RelayFixture.start({ nats: a.nats, profile: a.profile, env: { MAX_STREAMS_PER_ACCOUNT: '2' } });
});

afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function claims(): Promise<Map<string, number>> {
  const kv = a.server.core.nats.buckets.streams;
  const out = new Map<string, number>();
  for await (const k of await kv.keys()) out.set(k, (await kv.get(k))?.revision ?? 0);
  return out;
}

describe('opens refused over the stream cap', () => {
  it('leave no stream, no claim and no close counted, and take nothing from the streams held', async () => {
    const key = await a.createKey();
    const p = a.player();
    const channels = ['held-0.example.net', 'held-1.example.net', 'held-2.example.net'];
    const held = [];
    for (const ch of channels) held.push(await a.connect(a.headers(p, key, ch)));
    const before = await claims();
    expect(before.size).toBe(3);
    const refusedHere = await Promise.all(Array.from({ length: 4 }, (_, i) => a.open(a.headers(p, key, `over-${i}.example.net`))));
    for (const r of refusedHere) expect((await r.refusal()).body.error).toBe('too_many_streams');
    // Gateway b counts a's three (once a's heartbeat is in its view) and refuses even a reopen of a held channel.
    const reopen = await eventually(async () => {
      const s = await b.open(b.headers(p, key, channels[0]));
      if (s.status === 200) throw new Error('b admitted a reopen over its cap');
      return s.status === 429 ? s : undefined;
    }, 'gateway b to count gateway a’s streams');
    expect((await reopen.refusal()).body.error).toBe('too_many_streams');
    // Nothing was claimed or rewritten, and every held stream still hears its channel.
    expect(await claims()).toEqual(before);
    for (const [i, s] of held.entries()) {
      await a.post({ type: 'chat', message: `still ${i}` }, a.headers(a.player(), key, channels[i]));
      expect((await s.nextPair()).data.message).toBe(`still ${i}`);
    }
    const m = await readMetrics(a.url);
    expect(m.get('relay_streams_open')).toBe(3);
    expect(m.get('relay_streams_opened_total')).toBe(3);
    const closes = [...m].filter(([name]) => name.startsWith('relay_streams_closed_total')).reduce((sum, [, v]) => sum + v, 0);
    expect(closes).toBe(0);
    expect(m.get('relay_refusals_total{code="too_many_streams"}')).toBe(4);
  });
});
