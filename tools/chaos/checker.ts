// The campaign's checker: the three promises checked against what the clients saw and what the log
// holds at the end (check-writes.ts, check-readers.ts, check-streams.ts), anomalies counted by class.
// Pure: the tests feed it histories made by hand.

import { checkReaders, type ReaderCounts } from './check-readers.js';
import { checkStreams, type StreamCounts } from './check-streams.js';
import { checkWrites, type WriteCounts } from './check-writes.js';
import { ANOMALY_CLASSES, type Anomaly, type AnomalyClass, type ClientRecord, type FaultWindow, type LogEntry, type WriteOp } from './records.js';

export interface CheckInput {
  ops: readonly WriteOp[];
  clients: readonly ClientRecord[];
  log: readonly LogEntry[];
  faults: readonly FaultWindow[];
  graceMs?: number;
}

export interface CheckResult {
  writes: WriteCounts;
  readers: ReaderCounts;
  streams: StreamCounts;
  anomalies: Anomaly[];
}

export function check(input: CheckInput): CheckResult {
  const writes = checkWrites(input.ops, input.log);
  const readers = checkReaders(input.clients, input.log);
  const streams = checkStreams(input.clients, input.faults, input.graceMs);
  return {
    writes: writes.counts,
    readers: readers.counts,
    streams: streams.counts,
    anomalies: [...writes.anomalies, ...readers.anomalies, ...streams.anomalies].sort((a, b) => a.t - b.t),
  };
}

/** Every class with its count, zeros included: a report says "0 lost", not nothing. */
export function countByClass(anomalies: readonly Anomaly[]): Record<AnomalyClass, number> {
  const counts = Object.fromEntries(ANOMALY_CLASSES.map((c) => [c, 0])) as Record<AnomalyClass, number>;
  for (const a of anomalies) counts[a.class]++;
  return counts;
}
