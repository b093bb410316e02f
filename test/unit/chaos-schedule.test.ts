// The fault campaign's schedule (tools/chaos/schedule.ts): a seed is a run, faults never overlap,
// and a long run covers every kind of fault the campaign promises.
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, kindOf, planFaults, WARM_UP_MS } from '../../tools/chaos/schedule.js';

const SHAPE = { nats: 3, gateways: 2, ingresses: 2 };
const HALF_HOUR = 30 * 60_000;

describe('the fault schedule', () => {
  it('is the same for the same seed and differs for another', () => {
    expect(planFaults(42, HALF_HOUR, SHAPE)).toEqual(planFaults(42, HALF_HOUR, SHAPE));
    expect(planFaults(43, HALF_HOUR, SHAPE)).not.toEqual(planFaults(42, HALF_HOUR, SHAPE));
  });

  it('runs one fault at a time, after the warm-up, each healed before the run ends', () => {
    const faults = planFaults(7, 2 * 60_000, SHAPE);
    expect(faults.length).toBeGreaterThan(5);
    expect(faults[0]!.at).toBe(WARM_UP_MS);
    for (const [i, f] of faults.entries()) {
      expect(f.id).toBe(i + 1);
      expect(f.at + f.durationMs).toBeLessThanOrEqual(2 * 60_000);
      if (i > 0) expect(f.at).toBeGreaterThan(faults[i - 1]!.at + faults[i - 1]!.durationMs);
    }
  });

  it('plans at least 150 faults in half an hour, covering every kind about evenly', () => {
    for (const seed of [1, 2, 3, 1234]) {
      const faults = planFaults(seed, HALF_HOUR, SHAPE);
      expect(faults.length).toBeGreaterThanOrEqual(150);
      const counts = new Map<string, number>();
      for (const f of faults) counts.set(kindOf(f.spec), (counts.get(kindOf(f.spec)) ?? 0) + 1);
      expect([...counts.keys()].sort()).toEqual([...FAULT_KINDS].sort());
      const least = Math.min(...counts.values());
      const most = Math.max(...counts.values());
      expect(most - least).toBeLessThanOrEqual(2);
    }
  });

  it('aims only at processes that exist', () => {
    for (const f of planFaults(99, HALF_HOUR, { nats: 3, gateways: 2, ingresses: 3 })) {
      const s = f.spec;
      if (s.kind === 'kill') expect(s.index).toBeLessThan(s.role === 'nats' ? 3 : s.role === 'gateway' ? 2 : 3);
      if (s.kind === 'pause-gateway') expect(s.index).toBeLessThan(2);
      if (s.kind === 'partition-relay') expect(s.index).toBeLessThan(s.role === 'gateway' ? 2 : 3);
      if (s.kind === 'disk-full') expect(s.node).toBeLessThan(3);
    }
  });

  it('narrowed to some kinds, plans only those', () => {
    const faults = planFaults(5, HALF_HOUR, SHAPE, ['disk full', 'kill nats']);
    expect(new Set(faults.map((f) => kindOf(f.spec)))).toEqual(new Set(['disk full', 'kill nats']));
  });
});
