// The resume window's bookkeeping: what it covers, what a byte budget shared by every channel
// evicts, and what a hole in the live feed does to it.
import { describe, expect, it } from 'vitest';
import { RelayMetrics } from '../../services/core/metrics.js';
import type { Frame } from '../../services/gateway/delivery/frame.js';
import { ChannelWindow, ResumeWindows } from '../../services/gateway/delivery/resume-window.js';

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

  it('does not cover a client whose id is past the newest frame heard here, but follows it: the frames after it are still on their way', () => {
    const windows = new ResumeWindows(1 << 20, new RelayMetrics('t'));
    const w = new ChannelWindow();
    windows.record(w, frame(10), 7);
    windows.record(w, frame(12), 10);
    expect(w.covers(12)).toBe(true);
    expect(w.covers(13)).toBe(false);
    expect(w.follows(13)).toBe(true);
    expect(w.follows(6)).toBe(false);
    expect(new ChannelWindow().follows(13)).toBe(false);
    // Frame 14 (13 was another channel's) reaches this gateway late: then it covers the client's id.
    windows.record(w, frame(14), 12);
    expect(w.covers(13)).toBe(true);
    expect(w.since(13).map((f) => f.seq)).toEqual([14]);
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

describe('where a resume starts in the window', () => {
  const seqs = (frames: readonly Frame[]): number[] => frames.map((f) => f.seq);
  // Frames 10, 12 and 15 of one channel: the sequences between belong to other channels.
  const sparse = (): ChannelWindow => {
    const windows = new ResumeWindows(1 << 20, new RelayMetrics('t'));
    const w = new ChannelWindow();
    windows.record(w, frame(10), 7);
    windows.record(w, frame(12), 10);
    windows.record(w, frame(15), 12);
    return w;
  };

  it.each([
    ['before the first frame kept', 7, [10, 12, 15]],
    ['at the first frame', 10, [12, 15]],
    ['in a hole between two frames', 13, [15]],
    ['in the hole just before a frame', 11, [12, 15]],
    ['at the last frame (nothing missed)', 15, []],
    ['past the last frame', 99, []],
  ])('a client whose last id is %s gets exactly the frames after it', (_, lastId, expected) => {
    expect(seqs(sparse().since(lastId))).toEqual(expected);
  });

  it('after thousands of evictions (the kept frames moved to a new array), still starts after the id', () => {
    // Room for 1,000 frames; 5,000 go through, so the evicted front is cut off the array several times.
    const windows = new ResumeWindows(1000 * (100 + 64), new RelayMetrics('t'));
    const w = new ChannelWindow();
    for (let seq = 1; seq <= 5000; seq++) windows.record(w, frame(seq * 2), seq === 1 ? 0 : seq * 2 - 2);
    expect(w.size).toBe(1000);
    expect(w.covers(8000)).toBe(true);
    expect(w.covers(7999)).toBe(false);
    expect(seqs(w.since(8000))).toEqual(Array.from({ length: 1000 }, (_, i) => 8002 + 2 * i));
    expect(seqs(w.since(9001))).toEqual(Array.from({ length: 500 }, (_, i) => 9002 + 2 * i));
    expect(w.since(10_000)).toEqual([]);
  });

  it("a bridge's gap filled from the log after later frames takes its place in sequence order", () => {
    const windows = new ResumeWindows(1 << 20, new RelayMetrics('t'));
    const bridge = new ChannelWindow();
    windows.record(bridge, frame(10), 9);
    windows.record(bridge, frame(20), 19);
    windows.record(bridge, frame(21), 20);
    // 14 and 15 (another subject's gap) are read from the log once 20 and 21 were heard.
    windows.record(bridge, frame(14), null);
    windows.record(bridge, frame(15), null);
    expect(seqs(bridge.since(9))).toEqual([10, 14, 15, 20, 21]);
    expect(seqs(bridge.since(14))).toEqual([15, 20, 21]);
    expect(seqs(bridge.since(16))).toEqual([20, 21]);
  });

  it("a bridge's window that must evict drops its lowest sequence first, so it still covers everything it keeps", () => {
    const windows = new ResumeWindows(3 * (100 + 64), new RelayMetrics('t'));
    const bridge = new ChannelWindow();
    windows.record(bridge, frame(10), 9);
    windows.record(bridge, frame(20), 19);
    windows.record(bridge, frame(14), null);
    // Over budget: 10 goes, then the next to go is 14 (filled late), not 20 (heard before it).
    windows.record(bridge, frame(21), 20);
    windows.record(bridge, frame(22), 21);
    expect(seqs(bridge.since(0))).toEqual([20, 21, 22]);
    expect(bridge.covers(14)).toBe(true);
    expect(seqs(bridge.since(14))).toEqual([20, 21, 22]);
  });
});
