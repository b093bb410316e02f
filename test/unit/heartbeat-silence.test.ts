// A node that could not write its heartbeat for two beats may have been taken for dead and swept
// (no notice is sent for a sweep), though its NATS connection never dropped: a blackholed link that
// heals. The fault campaign (docs/RELIABILITY.md, seed 2027) saw gateways deliver some 650 frames on
// streams whose accounts had moved, for 2 s after such a link healed. The heartbeat says so once a beat
// is written again, and the gateway reads its claims (gateway.ts afterSilence).
import type { KV } from '@nats-io/kv';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeHeartbeat } from '../../services/core/node-heartbeat.js';

const BEAT_MS = 10;
/** Far above a beat's own delays on a loaded machine, so only the failed writes make a silence. */
const SILENCE_MS = 250;

/** A bucket whose writes fail while `failing`, telling each write to whoever waits for a count. */
function bucket(): { kv: KV; failing: boolean; writes: number; untilWrites(n: number): Promise<void> } {
  const waiters: Array<{ n: number; done: () => void }> = [];
  const b = {
    failing: false,
    writes: 0,
    kv: {} as KV,
    untilWrites(n: number): Promise<void> {
      return new Promise<void>((done) => waiters.push({ n: b.writes + n, done }));
    },
  };
  b.kv = {
    put: async () => {
      b.writes++;
      for (const w of waiters.filter((x) => b.writes >= x.n)) w.done();
      if (b.failing) throw new Error('timeout');
      return b.writes;
    },
    delete: async () => undefined,
  } as unknown as KV;
  return b;
}

let beat: NodeHeartbeat | null = null;
afterEach(async () => {
  await beat?.stop();
});

describe('a heartbeat that could not be written for a while', () => {
  it('says how long once a beat is written again', async () => {
    const b = bucket();
    const silences: number[] = [];
    let told: () => void = () => undefined;
    const heard = new Promise<void>((resolve) => (told = resolve));
    beat = new NodeHeartbeat({ kv: b.kv, nodeId: 'g1', role: 'gateway', beatMs: BEAT_MS, status: async () => ({ ready: true }), silence: { afterMs: SILENCE_MS, then: (gap) => (silences.push(gap), told()) } });
    await beat.start();
    b.failing = true;
    // Failing well past SILENCE_MS (each try is a beat apart).
    await b.untilWrites(2 * (SILENCE_MS / BEAT_MS));
    expect(silences).toEqual([]);
    b.failing = false;
    await heard;
    expect(silences).toHaveLength(1);
    expect(silences[0]).toBeGreaterThan(SILENCE_MS);
  });

  it('says nothing while every beat is written', async () => {
    const b = bucket();
    const silences: number[] = [];
    beat = new NodeHeartbeat({ kv: b.kv, nodeId: 'g1', role: 'gateway', beatMs: BEAT_MS, status: async () => ({ ready: true }), silence: { afterMs: SILENCE_MS, then: (gap) => silences.push(gap) } });
    await beat.start();
    await b.untilWrites(8);
    expect(silences).toEqual([]);
  });
});
