// Presence coalescing, alone: what a stream's queue keeps when frames wait for a client that is not
// reading. No relay, no NATS: each row pushes frames, then takes the queue as one flush would.

import { describe, expect, it } from 'vitest';
import { CoalescingQueue, type QueuedFrame } from '../../services/gateway/stream/presence-coalescing.js';

/** `p:alice:1` is a presence snapshot of alice; `chat:bob:1` any other frame of bob. */
function frame(label: string): QueuedFrame {
  const [type, sender] = label.split(':');
  return { isPresence: type === 'p', sender: sender!, bytes: Buffer.from(`${label};`) };
}

interface Row {
  name: string;
  /** Frames pushed in one flush, in order. */
  pushed: string[];
  /** What the flush writes, in order. */
  written: string[];
  dropped: number;
}

const rows: Row[] = [
  { name: 'a lone frame goes out as it is', pushed: ['p:alice:1'], written: ['p:alice:1'], dropped: 0 },
  {
    name: 'several snapshots of one sender keep only the newest',
    pushed: ['p:alice:1', 'p:alice:2', 'p:alice:3'],
    written: ['p:alice:3'],
    dropped: 2,
  },
  {
    name: 'snapshots of different senders are all kept',
    pushed: ['p:alice:1', 'p:bob:1', 'p:carol:1'],
    written: ['p:alice:1', 'p:bob:1', 'p:carol:1'],
    dropped: 0,
  },
  {
    name: 'frames other than presence are never coalesced',
    pushed: ['chat:alice:1', 'chat:alice:2', 'ping:alice:1', 'ping:alice:2'],
    written: ['chat:alice:1', 'chat:alice:2', 'ping:alice:1', 'ping:alice:2'],
    dropped: 0,
  },
  {
    name: 'a newer snapshot takes its place at the end, after what arrived in between',
    pushed: ['p:alice:1', 'chat:bob:1', 'p:alice:2', 'chat:bob:2'],
    written: ['chat:bob:1', 'p:alice:2', 'chat:bob:2'],
    dropped: 1,
  },
  {
    name: 'another frame of the sender does not stop its snapshots coalescing',
    pushed: ['p:alice:1', 'chat:alice:1', 'p:alice:2'],
    written: ['chat:alice:1', 'p:alice:2'],
    dropped: 1,
  },
  {
    name: 'interleaved senders each keep their newest, in the order those arrived',
    pushed: ['p:alice:1', 'p:bob:1', 'p:alice:2', 'p:bob:2', 'p:carol:1', 'p:alice:3'],
    written: ['p:bob:2', 'p:carol:1', 'p:alice:3'],
    dropped: 3,
  },
];

describe('presence coalescing inside one flush', () => {
  it.each(rows)('$name', ({ pushed, written, dropped }) => {
    const queue = new CoalescingQueue();
    const frames = pushed.map(frame);
    const drops = frames.filter((f) => queue.push(f)).length;
    expect(drops).toBe(dropped);
    expect(queue.length).toBe(written.length);
    expect(queue.bytes).toBe(written.reduce((n, l) => n + l.length + 1, 0));
    expect(Buffer.from(queue.take()).toString()).toBe(written.map((l) => `${l};`).join(''));
    expect(queue.length).toBe(0);
    expect(queue.bytes).toBe(0);
  });
});

describe('across flushes', () => {
  it('a snapshot already taken is never replaced: the next flush starts afresh', () => {
    const queue = new CoalescingQueue();
    expect(queue.push(frame('p:alice:1'))).toBe(false);
    expect(Buffer.from(queue.take()).toString()).toBe('p:alice:1;');
    expect(queue.push(frame('p:alice:2'))).toBe(false);
    expect(queue.push(frame('p:alice:3'))).toBe(true);
    expect(Buffer.from(queue.take()).toString()).toBe('p:alice:3;');
  });

  it('a cleared queue holds nothing and coalesces nothing from before', () => {
    const queue = new CoalescingQueue();
    queue.push(frame('p:alice:1'));
    queue.push(frame('chat:bob:1'));
    queue.clear();
    expect(queue.length).toBe(0);
    expect(queue.push(frame('p:alice:2'))).toBe(false);
    expect(Buffer.from(queue.take()).toString()).toBe('p:alice:2;');
  });

  it('a lone frame is handed over without a copy', () => {
    const queue = new CoalescingQueue();
    const f = frame('chat:alice:1');
    queue.push(f);
    expect(queue.take()).toBe(f.bytes);
  });
});
