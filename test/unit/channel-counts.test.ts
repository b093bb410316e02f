// The admin service's per-channel counts (services/admin/channel-activity.ts) at their own level:
// bounded, and a flood of made-up channel names never hides a channel in use.
import { describe, expect, it } from 'vitest';
import { ChannelCounts } from '../../services/admin/channel-activity.js';
import { channelToken } from '../../services/core/channel.js';

const T0 = Date.UTC(2030, 0, 1);
const names = (counts: ChannelCounts, now: number): string[] => counts.snapshot(now).map((c) => c.channel);

describe('channel counts under a flood of junk channel names', () => {
  // Issue 19: once 20,000 names were held every new one was refused, real channels included.
  it('a real channel first seen after the bound is reached is counted, never refused', () => {
    const counts = new ChannelCounts(100);
    for (let i = 0; i < 100; i++) counts.count(channelToken(`junk-${i}.example.net`), T0);
    counts.count(channelToken('play.example.net'), T0 + 1);
    expect(counts.size).toBe(100);
    expect(names(counts, T0 + 1)).toContain('play.example.net');
    expect(names(counts, T0 + 1)).not.toContain('junk-0.example.net');
  });

  it('evicts the channel quiet the longest: a channel active during the flood stays, with its count', () => {
    const counts = new ChannelCounts(100);
    const real = channelToken('play.example.net');
    for (let i = 0; i < 10_000; i++) {
      counts.count(channelToken(`junk-${i}.example.net`), T0);
      if (i % 50 === 0) counts.count(real, T0);
    }
    expect(counts.size).toBe(100);
    const snapshot = counts.snapshot(T0);
    expect(snapshot.find((c) => c.channel === 'play.example.net')?.lastMinute).toBe(200);
    // The rest are the most recent junk names.
    expect(snapshot.map((c) => c.channel)).toContain('junk-9999.example.net');
    expect(snapshot.map((c) => c.channel)).not.toContain('junk-9000.example.net');
  });
});
