// The resume window's bookkeeping: what it covers, what a byte budget shared by every channel
// evicts, and what a hole in the live feed does to it.
import { describe, expect, it } from 'vitest';
import { RelayMetrics } from '../../services/core/metrics.js';
import type { Frame } from '../../services/gateway/frame.js';
import { ChannelWindow, ResumeWindows } from '../../services/gateway/resume-window.js';

const frame = (seq: number, size = 100): Frame => ({
  seq,
  typeBit: 1,
  isMessage: false,
  isKeepalive: false,
  isPresence: false,
  sender: 'x',
  to: null,
  publishedAt: 0,
  bytes: Buffer.alloc(size),
});

describe('the resume window', () => {
  it('covers from the frame before the first one it heard on its channel (Nats-Last-Sequence), and nothing before', () => {
    const windows = new ResumeWindows(1 << 20, new RelayMetrics('t'));
    const w = new ChannelWindow();
    expect(w.covers(0)).toBe(false);
    windows.record(w, frame(10), 7);
    windows.record(w, frame(12), 10);
    expect(w.covers(6)).toBe(false);
    expect(w.covers(7)).toBe(true);
    expect(w.since(7).map((f) => f.seq)).toEqual([10, 12]);
    expect(w.since(12)).toEqual([]);
    expect(w.newest).toBe(12);
  });

  it('evicts the oldest frame of all channels past the budget, and covers only what follows the evicted', () => {
    const metrics = new RelayMetrics('t');
    const windows = new ResumeWindows(3 * (100 + 64), metrics);
    const a = new ChannelWindow();
    const b = new ChannelWindow();
    windows.record(a, frame(1), 0);
    windows.record(b, frame(2), 0);
    windows.record(a, frame(3), 1);
    windows.record(b, frame(4), 2);
    // Frame 1 (channel a) went: a covers from 1 on, b still from 0.
    expect(a.covers(0)).toBe(false);
    expect(a.since(1).map((f) => f.seq)).toEqual([3]);
    expect(b.covers(0)).toBe(true);
    expect(b.since(0).map((f) => f.seq)).toEqual([2, 4]);
  });

  it("gives back a dropped channel's bytes to the others at once", () => {
    const windows = new ResumeWindows(2 * (100 + 64), new RelayMetrics('t'));
    const a = new ChannelWindow();
    const b = new ChannelWindow();
    windows.record(a, frame(1), 0);
    windows.record(a, frame(2), 1);
    windows.drop(a);
    windows.record(b, frame(3), 0);
    windows.record(b, frame(4), 3);
    expect(b.since(0).map((f) => f.seq)).toEqual([3, 4]);
  });

  it('after a hole that could not be filled, covers only what follows it; a cold channel learns its newest frame', () => {
    const windows = new ResumeWindows(1 << 20, new RelayMetrics('t'));
    const w = new ChannelWindow();
    windows.record(w, frame(5), 4);
    w.skipTo(9);
    expect(w.covers(5)).toBe(false);
    expect(w.covers(9)).toBe(true);
    const cold = new ChannelWindow();
    cold.learn(42);
    expect(cold.covers(42)).toBe(true);
    expect(cold.covers(41)).toBe(false);
  });

  it('with no budget keeps no frame, yet still answers a client at the newest frame', () => {
    const windows = new ResumeWindows(0, new RelayMetrics('t'));
    const w = new ChannelWindow();
    windows.record(w, frame(5), 4);
    windows.record(w, frame(6), 5);
    expect(w.covers(5)).toBe(false);
    expect(w.covers(6)).toBe(true);
    expect(w.since(6)).toEqual([]);
  });
});
