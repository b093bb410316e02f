// The default stream open rate against the reconnects real clients make: it must never refuse a
// legitimate resume. Simulated clock over the limiter the gateway's admission uses.
import { afterEach, describe, expect, it } from 'vitest';
import { ENV_SCHEMAS } from '../../services/core/config/schema.js';
import { RateLimiter } from '../../services/core/rate-limit.js';

const defaults = ENV_SCHEMAS.gateway.properties;
const rate = { perSecond: defaults.STREAM_OPEN_RATE.default, burst: defaults.STREAM_OPEN_BURST.default };
const limiters: RateLimiter[] = [];
afterEach(() => {
  for (const l of limiters.splice(0)) l.stop();
});

/** How many opens at these times (seconds) the default limit refuses. */
function refusedAt(times: readonly number[]): number {
  const l = new RateLimiter([rate]);
  limiters.push(l);
  return times.filter((t) => !l.take('account', [1], t * 1000).allowed).length;
}

describe('the default STREAM_OPEN_RATE and STREAM_OPEN_BURST', () => {
  it('let a client reconnect with back-off (1 s x 2^n) through an outage of ten minutes', () => {
    const times = [0];
    for (let n = 0; times.at(-1)! < 600; n++) times.push(times.at(-1)! + Math.min(60, 2 ** n));
    expect(refusedAt(times)).toBe(0);
  });

  it('let two copies of one account ping-pong (about 15 opens in 30 s) for an hour', () => {
    const times = Array.from({ length: 1800 }, (_, i) => i * 2);
    expect(refusedAt(times)).toBe(0);
  });

  it('let a client that drops every few seconds resume at once, ten times in a row', () => {
    expect(refusedAt(Array.from({ length: 10 }, (_, i) => i * 0.1))).toBe(0);
  });

  it('refuse a reopen loop (30 opens in 9.4 s, reopen.mjs)', () => {
    expect(refusedAt(Array.from({ length: 30 }, (_, i) => i * 0.31))).toBeGreaterThanOrEqual(15);
  });
});
