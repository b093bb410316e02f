// Keepalives are spread over the interval by channel: each channel always in the same slice, and
// the channels spread evenly enough that no tick writes to most of the streams at once.
import { describe, expect, it } from 'vitest';
import { KEEPALIVE_SLICES, keepaliveSlice } from '../../services/gateway/delivery/keepalives.js';

describe('keepalive slices', () => {
  it('puts a channel in the same slice every time', () => {
    for (const key of ['play.example.net', 'mc.hypixel.net', '[2001:db8::1]:25566', '*']) expect(keepaliveSlice(key)).toBe(keepaliveSlice(key));
  });

  it('spreads 5,000 channels over every slice, none with more than twice its share', () => {
    const counts = Array<number>(KEEPALIVE_SLICES).fill(0);
    for (let i = 0; i < 5000; i++) counts[keepaliveSlice(`server-${i}.example.net`)]!++;
    const share = 5000 / KEEPALIVE_SLICES;
    expect(Math.min(...counts)).toBeGreaterThan(share / 2);
    expect(Math.max(...counts)).toBeLessThan(share * 2);
  });
});
