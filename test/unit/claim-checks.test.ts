// Reading a claim's key after a notice or a refused renewal, one read at a time per claim (claim-checks.ts). A caller that
// asks while a read is in flight must be able to wait for a read made after its call: verify() holds
// a woken gateway's live feed until then, and a read that began before the wake may have seen the
// key as it was before the takeover.
import { describe, expect, it } from 'vitest';
import { ClaimChecks } from '../../services/gateway/ownership/claim-checks.js';

function gatedReads(): { checks: ClaimChecks<object>; reads: Array<() => void>; started: number[] } {
  const reads: Array<() => void> = [];
  const started: number[] = [];
  const checks = new ClaimChecks<object>(() => {
    started.push(reads.length);
    return new Promise<void>((resolve) => reads.push(resolve));
  });
  return { checks, reads, started };
}

describe('claim checks', () => {
  it('a check asked during a read resolves only after one more read, made after it was asked', async () => {
    const { checks, reads } = gatedReads();
    const claim = {};
    let firstDone = false;
    let secondDone = false;
    void checks.check(claim).then(() => (firstDone = true));
    await Promise.resolve();
    expect(reads).toHaveLength(1);
    void checks.check(claim).then(() => (secondDone = true));
    reads[0]!();
    await new Promise((r) => setImmediate(r));
    // The read that began before the second call ended: the second caller still waits.
    expect(reads).toHaveLength(2);
    expect(secondDone).toBe(false);
    reads[1]!();
    await new Promise((r) => setImmediate(r));
    expect(secondDone).toBe(true);
    expect(firstDone).toBe(true);
  });

  it('never reads one claim twice at once, however many ask meanwhile', async () => {
    const { checks, reads } = gatedReads();
    const claim = {};
    const asked = Array.from({ length: 5 }, () => checks.check(claim));
    await Promise.resolve();
    expect(reads).toHaveLength(1);
    reads[0]!();
    await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(2);
    reads[1]!();
    await Promise.all(asked);
    expect(reads).toHaveLength(2);
  });

  it('checkAll resolves once every claim was read, a read already in flight included', async () => {
    const { checks, reads } = gatedReads();
    const busy = {};
    const idle = {};
    void checks.check(busy);
    await Promise.resolve();
    let all = false;
    void checks.checkAll([busy, idle]).then(() => (all = true));
    await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(2); // busy's first read, idle's read
    reads[0]!();
    reads[1]!();
    await new Promise((r) => setImmediate(r));
    expect(all).toBe(false); // busy is read once more, after checkAll asked
    expect(reads).toHaveLength(3);
    reads[2]!();
    await new Promise((r) => setImmediate(r));
    expect(all).toBe(true);
  });
});
