// Every write against the event log, as Jepsen classifies them: an acknowledged write is present
// (once), lost (absent) or duplicated (more than once); a write never answered is unknown, stored
// or not, and never counted as lost; a write refused for good must not be stored; and nothing may
// be in the log that no writer sent. A writer waits for each answer before its next write, so its
// acknowledged writes are in the log in the order it made them.

import type { Anomaly, LogEntry, WriteOp } from './records.js';

export interface WriteCounts {
  /** Acknowledged writes checked (POSTs answered 2xx). */
  acknowledged: number;
  /** Their entries found exactly once. */
  present: number;
  lost: number;
  duplicated: number;
  /** Never answered by the end: stored (once) or not. */
  unknownStored: number;
  unknownAbsent: number;
  /** Refused for good (4xx). */
  failed: number;
  /** Entries of acknowledged writes checked. */
  entries: number;
}

export function checkWrites(ops: readonly WriteOp[], log: readonly LogEntry[]): { counts: WriteCounts; anomalies: Anomaly[] } {
  const seqs = new Map<string, number[]>();
  for (const e of log) {
    const list = seqs.get(e.message);
    if (list === undefined) seqs.set(e.message, [e.seq]);
    else list.push(e.seq);
  }
  const counts: WriteCounts = { acknowledged: 0, present: 0, lost: 0, duplicated: 0, unknownStored: 0, unknownAbsent: 0, failed: 0, entries: 0 };
  const anomalies: Anomaly[] = [];
  const sent = new Set<string>();
  const t = (op: WriteOp): number => op.completedAt ?? op.invokedAt;

  for (const op of ops) {
    const found = op.entries.map((m) => seqs.get(m) ?? []);
    for (const m of op.entries) sent.add(m);
    const twice = found.findIndex((s) => s.length > 1);
    if (twice >= 0) {
      counts.duplicated++;
      anomalies.push({ class: 'duplicated', t: t(op), subjects: [op.id], text: `${op.id} (${op.outcome}, ${op.attempts} attempts): entry ${op.entries[twice]} stored ${found[twice]!.length} times, at ${found[twice]!.join(', ')}` });
      continue;
    }
    const stored = found.filter((s) => s.length === 1).length;
    if (op.outcome === 'ok') {
      counts.acknowledged++;
      counts.entries += op.entries.length;
      if (stored === op.entries.length) counts.present++;
      else {
        counts.lost++;
        const missing = op.entries.filter((_, i) => found[i]!.length === 0);
        anomalies.push({ class: 'lost', t: t(op), subjects: [op.id], text: `${op.id} was acknowledged after ${op.attempts} attempts but ${missing.join(', ')} is not in the log` });
      }
    } else if (op.outcome === 'failed') {
      counts.failed++;
      if (stored > 0) anomalies.push({ class: 'stored-though-refused', t: t(op), subjects: [op.id], text: `${op.id} was refused for good (${op.refusal ?? '?'}) but ${stored} of its entries are in the log` });
    } else if (stored > 0) counts.unknownStored++;
    else counts.unknownAbsent++;
    // A batch is stored in its order.
    const order = found.flatMap((s) => s);
    if (order.some((s, i) => i > 0 && s < order[i - 1]!)) {
      anomalies.push({ class: 'write-order', t: t(op), subjects: [op.id], text: `${op.id}'s entries are in the log out of their order: ${order.join(', ')}` });
    }
  }

  // A writer's acknowledged writes, each made after the previous was answered, in the log in that order.
  const byWriter = new Map<string, WriteOp[]>();
  for (const op of ops) {
    if (op.outcome !== 'ok') continue;
    const list = byWriter.get(op.writer);
    if (list === undefined) byWriter.set(op.writer, [op]);
    else list.push(op);
  }
  for (const list of byWriter.values()) {
    let previous: { op: WriteOp; seq: number } | null = null;
    for (const op of list.sort((a, b) => a.invokedAt - b.invokedAt)) {
      const first = Math.min(...op.entries.map((m) => seqs.get(m)?.[0] ?? Infinity));
      const last = Math.max(...op.entries.map((m) => seqs.get(m)?.[0] ?? -Infinity));
      if (!Number.isFinite(first)) continue;
      if (previous !== null && previous.op.completedAt !== null && previous.op.completedAt <= op.invokedAt && first < previous.seq) {
        anomalies.push({ class: 'write-order', t: op.invokedAt, subjects: [previous.op.id, op.id], text: `${op.id} (invoked after ${previous.op.id} was acknowledged) is stored at ${first}, before it (${previous.seq})` });
      }
      previous = { op, seq: last };
    }
  }

  for (const e of log) {
    if (!sent.has(e.message)) anomalies.push({ class: 'phantom', t: 0, subjects: [], text: `log entry ${e.seq} on ${e.channel} ("${e.message.slice(0, 60)}") was sent by no writer` });
  }
  return { counts, anomalies };
}
