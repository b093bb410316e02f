// When a gateway compacts its heap: once, after a burst of opens has gone quiet, never for a steady
// trickle, and never twice within a minute. Timers and the clock are driven by hand; the collection
// is a recorder (test/unit/compacting-collection.test.ts runs the real one).

import { describe, expect, it } from 'vitest';
import { CHECK_EVERY_MS, HeapCompaction, type CompactionResult } from '../../services/gateway/heap-compaction.js';
import type { Timers } from '../../services/core/timers.js';

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
    oldSpace: () => ({ committed: compactions === 0 ? 200 : 100 }),
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
  return { c, results, period, scheduled: () => slot.next !== null };
}

describe('heap compaction after a burst of opens', () => {
  it('compacts once when a burst of opens goes quiet, and reports the opens, the pause and the old space', () => {
    const { c, results, period } = rig(1000);
    c.start();
    period(600);
    period(600);
    expect(results).toHaveLength(0);
    period(0);
    expect(results).toEqual([{ opens: 1200, ms: 300, before: 200, after: 100 }]);
    for (let i = 0; i < 20; i++) period(0);
    expect(results).toHaveLength(1);
  });

  it('waits while opens keep coming, however many have come', () => {
    const { c, results, period } = rig(1000);
    c.start();
    for (let i = 0; i < 10; i++) period(2000);
    expect(results).toHaveLength(0);
    period(9);
    expect(results).toHaveLength(1);
  });

  it('never compacts for a steady trickle of opens (1 % of a burst per period), however many it adds up to', () => {
    const { c, results, period } = rig(1000);
    c.start();
    for (let i = 0; i < 300; i++) period(10);
    expect(results).toHaveLength(0);
  });

  it('does not compact after fewer opens than a burst', () => {
    const { c, results, period } = rig(1000);
    c.start();
    period(999);
    for (let i = 0; i < 30; i++) period(0);
    expect(results).toHaveLength(0);
  });

  it('needs a burst of at least a quarter of the streams held (the pause follows the heap)', () => {
    const { c, results, period } = rig(1000, 100_000);
    c.start();
    period(20_000);
    period(0);
    expect(results).toHaveLength(0);
    period(5_000);
    period(0);
    expect(results).toHaveLength(1);
    expect(results[0]?.opens).toBe(25_000);
  });

  it('compacts a second burst only a minute after the first', () => {
    const { c, results, period } = rig(1000);
    c.start();
    period(1000);
    period(0);
    expect(results).toHaveLength(1);
    period(1000);
    period(0);
    expect(results).toHaveLength(1);
    const periodsInAMinute = Math.ceil(60_000 / CHECK_EVERY_MS);
    for (let i = 0; i < periodsInAMinute; i++) period(0);
    expect(results).toHaveLength(2);
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
