// When a gateway compacts its heap: once a burst of opens (1,000 within a minute here) is over,
// never for churn however long it runs, not held back by the churn after a burst, and never twice
// within a minute. Timers and the clock are driven by hand; the collection is a recorder
// (test/unit/compacting-collection.test.ts runs the real one).

import { describe, expect, it } from 'vitest';
import { BURST_WINDOW_PERIODS, CHECK_EVERY_MS, HeapCompaction, type CompactionResult } from '../../services/gateway/heap-compaction.js';
import type { Timers } from '../../services/core/timers.js';

const PERIODS_PER_HOUR = 3_600_000 / CHECK_EVERY_MS;

function rig(burstOpens: number, held = 0) {
  let now = 0;
  const slot: { next: { at: number; fire: () => void } | null } = { next: null };
  const timers: Timers = {
    after(ms, fire) {
      const entry = { at: now + ms, fire };
      slot.next = entry;
      return () => {
        if (slot.next === entry) slot.next = null;
      };
    },
    afterTurn(fire) {
      fire();
    },
  };
  const results: CompactionResult[] = [];
  let compactions = 0;
  const c = new HeapCompaction({
    burstOpens,
    held: () => held,
    timers,
    now: () => now,
    oldSpace: () => (compactions === 0 ? 200 : 100),
    compact: () => {
      compactions++;
      now += 300;
    },
    compacted: (r) => results.push(r),
  });
  /** One check period passes, with `opens` opens during it. */
  const period = (opens = 0): void => {
    for (let i = 0; i < opens; i++) c.opened();
    const p = slot.next;
    if (p === null) return;
    now = p.at;
    slot.next = null;
    p.fire();
  };
  const periods = (n: number, opens: (i: number) => number): void => {
    for (let i = 0; i < n; i++) period(opens(i));
  };
  return { c, results, period, periods, scheduled: () => slot.next !== null };
}

describe('heap compaction after a burst of opens', () => {
  it('compacts once when a burst of opens is over, and reports its opens, the pause and the old space', () => {
    const { c, results, period, periods } = rig(1000);
    c.start();
    period(600);
    period(600);
    period(300);
    expect(results).toHaveLength(0);
    period(0);
    expect(results).toEqual([{ opens: 1500, ms: 300, before: 200, after: 100 }]);
    periods(PERIODS_PER_HOUR, () => 0);
    expect(results).toHaveLength(1);
  });

  it('waits while the burst goes on, however many it has opened', () => {
    const { c, results, periods, period } = rig(1000);
    c.start();
    periods(20, () => 2000);
    expect(results).toHaveLength(0);
    period(199);
    expect(results).toHaveLength(1);
    expect(results[0]?.opens).toBe(40_199);
  });

  it('never compacts for churn below a burst a minute, at any rate, for an hour', () => {
    // Up to 17 and 16 a second in turn: at most 990 within any minute.
    for (const perPeriod of [1, 5, 9, 10, 16, 17]) {
      const { c, results, periods } = rig(1000);
      c.start();
      periods(PERIODS_PER_HOUR, (i) => (i % 2 === 0 ? perPeriod : Math.max(0, perPeriod - 1)));
      expect(results, `${perPeriod} opens per period`).toHaveLength(0);
    }
  });

  it('is not held back by the churn that goes on after a burst (under a tenth of its busiest period)', () => {
    const { c, results, period, periods } = rig(1000);
    c.start();
    periods(4, () => 1500);
    period(140);
    expect(results).toHaveLength(1);
    periods(PERIODS_PER_HOUR, () => 140);
    expect(results).toHaveLength(1);
  });

  it('counts a burst within a minute: the same opens spread wider are no burst', () => {
    const { c, results, periods } = rig(1000);
    c.start();
    periods(BURST_WINDOW_PERIODS * 10, () => Math.floor(999 / BURST_WINDOW_PERIODS));
    periods(10, () => 0);
    expect(results).toHaveLength(0);
  });

  it('passes over a burst smaller than a quarter of the streams held (the pause follows the heap)', () => {
    const { c, results, period, periods } = rig(1000, 100_000);
    c.start();
    periods(4, () => 5000);
    period(0);
    expect(results).toHaveLength(0);
    periods(5, () => 5000);
    period(0);
    expect(results).toHaveLength(1);
    expect(results[0]?.opens).toBe(25_000);
  });

  it('compacts a second burst only a minute after the first', () => {
    const { c, results, period, periods } = rig(1000);
    c.start();
    period(1000);
    period(0);
    expect(results).toHaveLength(1);
    period(1000);
    period(0);
    expect(results).toHaveLength(1);
    periods(Math.ceil(60_000 / CHECK_EVERY_MS), () => 0);
    expect(results).toHaveLength(2);
    expect(results[1]?.opens).toBe(1000);
  });

  it('with 0 never looks, and stop cancels the check', () => {
    const off = rig(0);
    off.c.start();
    expect(off.scheduled()).toBe(false);
    const on = rig(1000);
    on.c.start();
    expect(on.scheduled()).toBe(true);
    on.c.stop();
    expect(on.scheduled()).toBe(false);
  });
});
