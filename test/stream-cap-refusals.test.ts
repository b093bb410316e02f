// A stream over its owner's cap is registered and claimed before the census answers (the two run at
// once), then refused: what the client sees is a 429 and nothing else, and the relay keeps nothing of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil as eventually } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { MAX_STREAMS_PER_ACCOUNT: '2' } });
});

afterAll(async () => {
  await relay?.close();
});

async function claimKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const k of await relay.server.core.nats.buckets.streams.keys()) keys.push(k);
  return keys.sort();
}

describe('opens refused over the stream cap', () => {
  it('leave no claim, no stream and no close counted, and take nothing from the streams held', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const held = [await relay.connect(relay.headers(p, key, 'held-0.example.net')), await relay.connect(relay.headers(p, key, 'held-1.example.net'))];
    const heldClaims = await claimKeys();
    expect(heldClaims).toHaveLength(2);
    const refused = await Promise.all(Array.from({ length: 6 }, (_, i) => relay.open(relay.headers(p, key, `over-${i}.example.net`))));
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect((await r.refusal()).body.error).toBe('too_many_streams');
    }
    // Their claims (written while the census was asked) are deleted with them.
    await eventually(async () => JSON.stringify(await claimKeys()) === JSON.stringify(heldClaims), 'the refused opens’ claims to be deleted');
    const m = await readMetrics(relay.url);
    expect(m.get('relay_streams_open')).toBe(2);
    expect(m.get('relay_streams_opened_total')).toBe(2);
    const closes = [...m].filter(([name]) => name.startsWith('relay_streams_closed_total')).reduce((sum, [, v]) => sum + v, 0);
    expect(closes).toBe(0);
    expect(m.get('relay_refusals_total{code="too_many_streams"}')).toBe(6);
    // The held streams were not evicted: both still hear their channels.
    for (const [i, s] of held.entries()) {
      await relay.post({ type: 'chat', message: `still ${i}` }, relay.headers(relay.player(), key, `held-${i}.example.net`));
      expect((await s.nextPair()).data.message).toBe(`still ${i}`);
    }
  });
});
