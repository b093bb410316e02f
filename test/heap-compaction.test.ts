// A gateway that took a burst of opens gives the memory the burst left back once the opens go quiet
// (HEAP_COMPACTION_AFTER_OPENS; the rule's every case is in test/unit/heap-compaction.test.ts, the
// collection's effect on each Node in test/unit/compacting-collection.test.ts). Real relay, real
// sockets; the relay runs in this process, so the collection pauses the test too.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';
import type { SseStream } from './helpers/sse-client.js';

const BURST = 20;
let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start({ env: { HEAP_COMPACTION_AFTER_OPENS: String(BURST) } });
});
afterAll(async () => {
  await relay?.close();
});

describe('heap compaction after a burst of opens', () => {
  it('compacts once a burst of opens is over, counting only the streams opened, says so in its log and metrics, and every stream keeps delivering', async () => {
    const key = await relay.createKey();
    const ch = 'compaction.example.net';
    // Refused opens (no channel named) are not a burst's: the log below counts exactly BURST.
    for (let i = 0; i < BURST; i++) {
      const refused = await relay.open(relay.headers(relay.player(), key, null));
      expect((await refused.refusal()).body.error).toBe('missing_channel');
    }
    const streams: SseStream[] = [];
    for (let i = 0; i < BURST; i++) streams.push(await relay.connect(relay.headers(relay.player(), key, ch)));

    const logged = await relay.logs.line('compacted the heap after a burst of opens');
    expect(logged).toMatchObject({ opens: BURST, pauseMs: expect.any(Number), oldSpaceMiB: [expect.any(Number), expect.any(Number)] });
    const metrics = await readMetrics(relay.url);
    expect(metrics.get('relay_heap_compaction_seconds_count')).toBe(1);

    await relay.post({ type: 'chat', message: 'after the compaction' }, relay.headers(relay.player(), key, ch));
    for (const s of streams) expect((await s.nextPair()).data['message']).toBe('after the compaction');
  });
});
