// The per-account token buckets, alone, with the clock in the test's hands: two currencies (entries
// and bytes), bursts, refill, Retry-After, and accounts that never share a bucket.

import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter, type Rate } from '../../services/core/rate-limit.js';

const ENTRIES: Rate = { perSecond: 2, burst: 4 };
const BYTES: Rate = { perSecond: 1000, burst: 4000 };
const limiters: RateLimiter[] = [];

function limiter(...rates: Rate[]): RateLimiter {
  const l = new RateLimiter(rates);
  limiters.push(l);
  return l;
}

afterEach(() => {
  for (const l of limiters.splice(0)) l.stop();
});

/** Seconds to the limiter's clock (milliseconds). */
const at = (seconds: number): number => seconds * 1000;

describe('rate limiter: entries and bytes per account', () => {
  it('lets a new account spend its whole burst at once, then refuses with the wait in whole seconds', () => {
    const l = limiter(ENTRIES, BYTES);
    for (let i = 0; i < 4; i++) expect(l.take('alice', [1, 10], at(0)).allowed).toBe(true);
    // One entry short at 2 per second: half a second, rounded up to the whole second Retry-After says.
    expect(l.take('alice', [1, 10], at(0))).toEqual({ allowed: false, retryAfter: 1, refusedBy: 0 });
  });

  it('refills at the configured rate, never beyond the burst', () => {
    const l = limiter(ENTRIES, BYTES);
    expect(l.take('alice', [4, 0], at(0)).allowed).toBe(true);
    // 1.5 s later: 3 entries back.
    expect(l.take('alice', [3, 0], at(1.5)).allowed).toBe(true);
    expect(l.take('alice', [1, 0], at(1.5)).allowed).toBe(false);
    // An hour idle refills to the burst (4), not to 7,200.
    expect(l.take('alice', [4, 0], at(3600)).allowed).toBe(true);
    expect(l.take('alice', [1, 0], at(3600))).toMatchObject({ allowed: false, refusedBy: 0 });
  });

  it('says how long until a larger request fits', () => {
    const l = limiter(ENTRIES, BYTES);
    expect(l.take('alice', [4, 0], at(0)).allowed).toBe(true);
    // Needs 3 entries at 2 per second: 1.5 s, said as 2.
    expect(l.take('alice', [3, 0], at(0))).toEqual({ allowed: false, retryAfter: 2, refusedBy: 0 });
  });

  it('refuses on bytes when entries would still pass, and names the bytes bucket', () => {
    const l = limiter(ENTRIES, BYTES);
    expect(l.take('alice', [1, 3500], at(0)).allowed).toBe(true);
    // 500 bytes left; 1500 more need 1 s at 1000 per second.
    expect(l.take('alice', [1, 1500], at(0))).toEqual({ allowed: false, retryAfter: 1, refusedBy: 1 });
  });

  it('charges a refused request nothing, in either currency', () => {
    const l = limiter(ENTRIES, BYTES);
    expect(l.take('alice', [3, 0], at(0)).allowed).toBe(true);
    // Refused on bytes: the one entry it would have cost stays in the entries bucket.
    expect(l.take('alice', [1, 5000], at(0)).allowed).toBe(false);
    expect(l.take('alice', [1, 4000], at(0)).allowed).toBe(true);
  });

  it('answers a request larger than the burst with a long wait rather than a retry loop', () => {
    const l = limiter(ENTRIES, BYTES);
    expect(l.take('alice', [5, 0], at(0))).toEqual({ allowed: false, retryAfter: 60, refusedBy: 0 });
    expect(l.take('alice', [1, 4001], at(0))).toEqual({ allowed: false, retryAfter: 60, refusedBy: 1 });
  });

  it('keeps one bucket per account: one account spending its burst costs another nothing', () => {
    const l = limiter(ENTRIES, BYTES);
    expect(l.take('alice', [4, 4000], at(0)).allowed).toBe(true);
    expect(l.take('alice', [1, 0], at(0)).allowed).toBe(false);
    expect(l.take('bob', [4, 4000], at(0)).allowed).toBe(true);
  });

  it('lets everything through in a currency whose rate is 0 (off)', () => {
    const l = limiter(ENTRIES, { perSecond: 0, burst: 0 });
    expect(l.take('alice', [1, 1_000_000_000], at(0)).allowed).toBe(true);
    const off = limiter({ perSecond: 0, burst: 0 }, { perSecond: 0, burst: 0 });
    for (let i = 0; i < 1000; i++) expect(off.take('alice', [1, 1], at(0)).allowed).toBe(true);
  });
});
