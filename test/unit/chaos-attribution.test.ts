// The campaign's attribution: which anomalies the event log's replicas disagreeing explains.
import { describe, expect, it } from 'vitest';
import { attribute } from '../../tools/chaos/attribution.js';
import type { ReplicaLog } from '../../tools/chaos/final-state.js';
import type { ClientRecord, LogEntry, WriteOp } from '../../tools/chaos/records.js';

const CH = 'c.example.net';
const entry = (seq: number, message: string): LogEntry => ({ seq, channel: CH, message });
const op = (id: string, outcome: WriteOp['outcome'] = 'ok'): WriteOp => ({ id, writer: 'w1', channel: CH, entries: [`${id}:0`], invokedAt: 0, completedAt: 1, outcome, refusal: null, attempts: 1 });
const reader = (frames: Array<[number, string]>): ClientRecord => ({ id: 'r1#1', reader: 'r1', account: 'a', channel: CH, startId: null, frames: frames.map(([id, message]) => ({ t: 0, id, message })), opens: [], closed: null });
const replica = (node: string, entries: LogEntry[]): ReplicaLog => ({ node, entries, missing: [] });

describe('what the replicas disagreeing explains', () => {
  it('an acknowledged write another replica holds, and a frame that is another replica’s entry at its id, are counted as such', () => {
    const leader = [entry(1, 'w1:1:0'), entry(2, 'w1:3:0')];
    const behind = [entry(1, 'w1:1:0'), entry(2, 'w1:2:0')];
    const a = attribute('n1', leader, [replica('n1', leader), replica('n2', behind), replica('n3', leader)], [op('w1:1'), op('w1:2'), op('w1:3')], [reader([[1, 'w1:1:0'], [2, 'w1:2:0']])]);
    expect(a).toEqual({ divergentReplicas: ['n2'], lost: 1, lostHeldByAnotherReplica: 1, framesDiffering: 1, framesFromAnotherReplica: 1 });
  });

  it('a write lost from every replica and a frame no replica holds are not put down to the replicas', () => {
    const leader = [entry(1, 'w1:1:0')];
    const a = attribute('n1', leader, [replica('n1', leader), replica('n2', leader)], [op('w1:1'), op('w1:2'), op('w1:9', 'unknown')], [reader([[1, 'w1:7:0']])]);
    expect(a).toEqual({ divergentReplicas: [], lost: 1, lostHeldByAnotherReplica: 0, framesDiffering: 1, framesFromAnotherReplica: 0 });
  });
});
