// The fault campaign's checker (tools/chaos/checker.ts) over histories written by hand: each anomaly
// class is found where it is, and a history without one yields none.
import { describe, expect, it } from 'vitest';
import { checkReaders } from '../../tools/chaos/check-readers.js';
import { checkStreams } from '../../tools/chaos/check-streams.js';
import { check, countByClass } from '../../tools/chaos/checker.js';
import type { ClientRecord, LogEntry, WriteOp } from '../../tools/chaos/records.js';

const CH = 'play.example.net';

function op(id: string, outcome: WriteOp['outcome'], invokedAt: number, entries = [`${id}:0`], refusal: string | null = null): WriteOp {
  return { id, writer: id.split(':')[0]!, channel: CH, entries, invokedAt, completedAt: outcome === 'ok' || outcome === 'failed' ? invokedAt + 5 : null, outcome, refusal, attempts: 1 };
}

function log(...messages: string[]): LogEntry[] {
  return messages.map((message, i) => ({ seq: i + 1, channel: CH, message }));
}

function client(id: string, account: string, frames: Array<[number, number, string]>, extra: Partial<ClientRecord> = {}): ClientRecord {
  return {
    id,
    reader: account,
    account,
    channel: CH,
    startId: null,
    frames: frames.map(([t, seq, message]) => ({ t, id: seq, message })),
    opens: [{ t: 0, gateway: 'gateway-1' }],
    closed: null,
    ...extra,
  };
}

const classes = (r: { anomalies: Array<{ class: string }> }): string[] => r.anomalies.map((a) => a.class);

describe('the write checker', () => {
  it('counts acknowledged writes present once, and unknown ones stored or not, with no anomaly', () => {
    const r = check({ ops: [op('w1:1', 'ok', 0), op('w1:2', 'ok', 10), op('w2:1', 'unknown', 5), op('w2:2', 'unknown', 20)], clients: [], log: log('w1:1:0', 'w2:1:0', 'w1:2:0'), faults: [] });
    expect(r.anomalies).toEqual([]);
    expect(r.writes).toMatchObject({ acknowledged: 2, present: 2, unknownStored: 1, unknownAbsent: 1 });
  });

  it('finds an acknowledged write missing from the log (lost), and never calls an unknown one lost', () => {
    const r = check({ ops: [op('w1:1', 'ok', 0), op('w1:2', 'unknown', 10)], clients: [], log: [], faults: [] });
    expect(classes(r)).toEqual(['lost']);
    expect(r.anomalies[0]!.subjects).toEqual(['w1:1']);
  });

  it('finds a write stored twice, acknowledged or not (one Idempotency-Key, one entry)', () => {
    const r = check({ ops: [op('w1:1', 'ok', 0), op('w2:1', 'unknown', 1)], clients: [], log: log('w1:1:0', 'w2:1:0', 'w1:1:0', 'w2:1:0'), faults: [] });
    expect(classes(r).sort()).toEqual(['duplicated', 'duplicated']);
  });

  it('finds a write refused for good that is stored anyway, and an entry no writer sent', () => {
    const r = check({ ops: [op('w1:1', 'failed', 0, ['w1:1:0'], '400 invalid_payload')], clients: [], log: log('w1:1:0', 'nobody'), faults: [] });
    expect(classes(r).sort()).toEqual(['phantom', 'stored-though-refused']);
  });

  it('finds a write stored before the acknowledged write its writer made first, and a batch out of order', () => {
    const r = check({ ops: [op('w1:1', 'ok', 0), op('w1:2', 'ok', 10, ['w1:2:0', 'w1:2:1'])], clients: [], log: log('w1:2:1', 'w1:1:0', 'w1:2:0'), faults: [] });
    expect(classes(r).sort()).toEqual(['write-order', 'write-order']);
  });
});

describe('the reader checker', () => {
  const entries = log('a', 'b', 'c', 'd');

  it('accepts a client whose frames are the log from its first on, joined across a resume', () => {
    const r = checkReaders([client('r1#1', 'r1', [[1, 2, 'b'], [2, 3, 'c'], [9, 4, 'd']])], entries);
    expect(r.anomalies).toEqual([]);
    expect(r.counts).toMatchObject({ frames: 3, caughtUp: 1 });
  });

  it('starting from a Last-Event-ID, its first frame must be the next one', () => {
    const r = checkReaders([client('r1#2', 'r1', [[1, 3, 'c'], [2, 4, 'd']], { startId: 1 })], entries);
    expect(classes(r)).toEqual(['gap']);
    expect(r.anomalies[0]!.text).toContain(': 2');
  });

  it('finds a gap, a duplicate, a reorder and a frame that is not the log entry at its id', () => {
    const gap = client('g#1', 'g', [[1, 1, 'a'], [2, 3, 'c'], [3, 4, 'd']]);
    const dup = client('d#1', 'd', [[1, 1, 'a'], [2, 2, 'b'], [3, 2, 'b'], [4, 3, 'c'], [5, 4, 'd']]);
    const reorder = client('o#1', 'o', [[1, 1, 'a'], [2, 3, 'c'], [3, 2, 'b'], [4, 4, 'd']]);
    const wrong = client('x#1', 'x', [[1, 1, 'a'], [2, 2, 'zzz'], [3, 3, 'c'], [4, 4, 'd']]);
    const r = checkReaders([gap, dup, reorder, wrong], entries);
    expect(countByClass(r.anomalies)).toMatchObject({ gap: 2, 'duplicate-frame': 1, reorder: 1, 'wrong-frame': 1 });
  });

  it('a client still running must have reached the end of its channel; one evicted need not', () => {
    const behind = client('r1#1', 'r1', [[1, 1, 'a'], [2, 2, 'b']]);
    const evicted = client('r2#1', 'r2', [[1, 1, 'a']], { closed: { t: 3, reason: 'evicted' } });
    const r = checkReaders([behind, evicted], entries);
    expect(classes(r)).toEqual(['not-caught-up']);
  });

  it('a stream closed for good for another reason than its eviction is an anomaly', () => {
    const banned = client('r1#1', 'r1', [[1, 1, 'a']], { closed: { t: 2, reason: 'banned' } });
    expect(classes(checkReaders([banned], entries))).toEqual(['closed-for-good']);
  });
});

describe('the one-stream checker', () => {
  const frames = (from: number, pairs: Array<[number, number]>): Array<[number, number, string]> =>
    pairs.filter(([, seq]) => seq >= from).map(([t, seq]): [number, number, string] => [t, seq, 'abcde'[seq - 1]!]);

  it('an older stream that stops within the grace after the newer opens is no anomaly', () => {
    const older = client('r1#1', 'r1', frames(1, [[100, 1], [200, 2], [1100, 3]]), { closed: { t: 1150, reason: 'evicted' } });
    const newer = client('r1#2', 'r1', frames(3, [[1200, 3], [1300, 4], [1400, 5]]), { startId: 2, opens: [{ t: 1000, gateway: 'gateway-2' }] });
    const r = checkStreams([older, newer], []);
    expect(r.anomalies).toEqual([]);
    expect(r.counts).toMatchObject({ contested: 1, takeovers: 1, lateFrames: 1 });
  });

  it('an older stream still receiving past the grace is a double stream', () => {
    const older = client('r1#1', 'r1', frames(1, [[100, 1], [2500, 2], [2600, 3]]));
    const newer = client('r1#2', 'r1', frames(1, [[1100, 1], [2500, 2], [2600, 3], [2700, 4], [2800, 5]]), { opens: [{ t: 1000, gateway: 'gateway-2' }] });
    const r = checkStreams([older, newer], []);
    expect(classes(r)).toContain('double-stream');
    expect(r.anomalies.find((a) => a.class === 'double-stream')!.subjects).toEqual(['r1#2', 'r1#1']);
  });

  it('frames late because a fault split the mesh are excused until it healed, and one more grace', () => {
    const fault = { id: 1, start: 500, end: 5000 };
    const older = client('r1#1', 'r1', frames(1, [[100, 1], [5400, 2]]), { closed: { t: 5500, reason: 'evicted' } });
    const newer = client('r1#2', 'r1', frames(1, [[1100, 1], [1200, 2], [1300, 3], [1400, 4], [1500, 5]]), { opens: [{ t: 1000, gateway: 'gateway-2' }] });
    expect(checkStreams([older, newer], [fault]).anomalies).toEqual([]);
    const later = client('r1#1', 'r1', frames(1, [[100, 1], [6500, 2]]), { closed: { t: 6600, reason: 'evicted' } });
    expect(classes(checkStreams([later, newer], [fault]))).toEqual(['double-stream']);
  });

  it("frames of the older client's own reconnect, after the newer opened, are its new stream's", () => {
    const older = client('r1#1', 'r1', frames(1, [[100, 1], [3000, 2], [3100, 3], [3200, 4], [3300, 5]]), { opens: [{ t: 0, gateway: 'gateway-1' }, { t: 2900, gateway: 'gateway-1' }] });
    const newer = client('r1#2', 'r1', frames(1, [[1100, 1]]), { opens: [{ t: 1000, gateway: 'gateway-2' }], closed: { t: 2950, reason: 'evicted' } });
    expect(checkStreams([older, newer], []).anomalies).toEqual([]);
  });
});
