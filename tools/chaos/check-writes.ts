// Every write against the event log, as Jepsen classifies them: an acknowledged write is present
// (once), lost (absent) or duplicated (more than once); a write never answered is unknown, stored
// or not, and never counted as lost; a write refused for good must not be stored; and nothing may
// be in the log that no writer sent. A writer waits for each answer before its next write, so its
// acknowledged writes are in the log in the order it made them. With regions the log is every
// region's log: an entry is where it is in its region's, and order is only kept within one region
// (docs/REGIONS.md: a sender's payloads in two regions have no order between them).

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
  /** Writes stored twice as `mayRepeat` allows (with regions: a POST that failed over), counted once. */
  repeatedAllowed: number;
}

/**
 * `mayRepeat`: whether an operation whose entries are stored more than once (`found`, per entry)
 * may be: with regions, a POST sent again in another region (docs/REGIONS.md "Idempotency keys are
 * per region"). Such a write is then checked as stored once, and not for its writer's order.
 */
export function checkWrites(ops: readonly WriteOp[], log: readonly LogEntry[], mayRepeat: (op: WriteOp, found: ReadonlyArray<readonly LogEntry[]>) => boolean = () => false): { counts: WriteCounts; anomalies: Anomaly[] } {
  const seqs = new Map<string, LogEntry[]>();
  for (const e of log) {
    const list = seqs.get(e.message);
    if (list === undefined) seqs.set(e.message, [e]);
    else list.push(e);
  }
  const counts: WriteCounts = { acknowledged: 0, present: 0, lost: 0, duplicated: 0, unknownStored: 0, unknownAbsent: 0, failed: 0, entries: 0, repeatedAllowed: 0 };
  const repeated = new Set<WriteOp>();
  const anomalies: Anomaly[] = [];
  const sent = new Set<string>();
  const t = (op: WriteOp): number => op.completedAt ?? op.invokedAt;

  for (const op of ops) {
    let found = op.entries.map((m) => seqs.get(m) ?? []);
    for (const m of op.entries) sent.add(m);
    const twice = found.findIndex((s) => s.length > 1);
    if (twice >= 0 && mayRepeat(op, found)) {
      counts.repeatedAllowed++;
      repeated.add(op);
      found = found.map((s) => s.slice(0, 1));
    } else if (twice >= 0) {
      counts.duplicated++;
      anomalies.push({ class: 'duplicated', t: t(op), subjects: [op.id], text: `${op.id} (${op.outcome}, ${op.attempts} attempts): entry ${op.entries[twice]} stored ${found[twice]!.length} times, at ${found[twice]!.map(where).join(', ')}` });
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
    if (order.some((e, i) => i > 0 && before(e, order[i - 1]!))) {
      anomalies.push({ class: 'write-order', t: t(op), subjects: [op.id], text: `${op.id}'s entries are in the log out of their order: ${order.map(where).join(', ')}` });
    }
  }

  // A writer's acknowledged writes, each made after the previous was answered, in the log in that order.
  const byWriter = new Map<string, WriteOp[]>();
  for (const op of ops) {
    if (op.outcome !== 'ok' || repeated.has(op)) continue;
    const list = byWriter.get(op.writer);
    if (list === undefined) byWriter.set(op.writer, [op]);
    else list.push(op);
  }
  for (const list of byWriter.values()) {
    let previous: { op: WriteOp; last: LogEntry } | null = null;
    for (const op of list.sort((a, b) => a.invokedAt - b.invokedAt)) {
      const stored = op.entries.flatMap((m) => seqs.get(m)?.slice(0, 1) ?? []).sort((a, b) => a.seq - b.seq);
      const first = stored[0];
      if (first === undefined) continue;
      if (previous !== null && previous.op.completedAt !== null && previous.op.completedAt <= op.invokedAt && before(first, previous.last)) {
        anomalies.push({ class: 'write-order', t: op.invokedAt, subjects: [previous.op.id, op.id], text: `${op.id} (invoked after ${previous.op.id} was acknowledged) is stored at ${where(first)}, before it (${where(previous.last)})` });
      }
      previous = { op, last: stored.at(-1)! };
    }
  }

  for (const e of log) {
    if (!sent.has(e.message)) anomalies.push({ class: 'phantom', t: 0, subjects: [], text: `log entry ${where(e)} on ${e.channel} ("${e.message.slice(0, 60)}") was sent by no writer` });
  }
  return { counts, anomalies };
}

/** Where an entry is: its sequence, with regions prefixed by its region ("b:17"). */
function where(e: LogEntry): string {
  return e.region === undefined ? String(e.seq) : `${e.region}:${e.seq}`;
}

/** Stored before another in the same log (entries of two regions' logs have no order). */
function before(e: LogEntry, other: LogEntry): boolean {
  return e.region === other.region && e.seq < other.seq;
}
