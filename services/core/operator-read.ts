// The operator's read of the event log (relay replay and tail, the admin API's replay and tail): a
// reader per log the operator's tools read (operator-logs.ts), each from where the query starts in
// it, joined by merged-log.ts. Every consumer it made is deleted when the read is closed or ends.

import type { JsMsg, JetStreamClient, OrderedConsumerOptions } from '@nats-io/jetstream';
import { formatEventId } from '../../schemas/event-id.js';
import { logEntry, type LogEntry } from './log-entry.js';
import { LogReader } from './log-reader.js';
import type { FromLog, MergeSource } from './merged-log.js';
import type { OperatorLog } from './operator-logs.js';

export interface OperatorRead {
  sources: MergeSource<JsMsg>[];
  /** Messages stored in the range, every log together, when the read began. */
  pending: number;
  close(): Promise<void>;
}

export interface ReadOptions {
  /** A subject of the one-log form: `channel.<token>`, or `channel.>` for every channel. */
  filter: string;
  startIn(log: OperatorLog): Partial<OrderedConsumerOptions>;
  follow: boolean;
  batch: number;
}

export async function openOperatorRead(js: JetStreamClient, logs: readonly OperatorLog[], options: ReadOptions): Promise<OperatorRead> {
  const opened = await Promise.allSettled(
    logs.map((log) => LogReader.open(js, { stream: log.stream, filter: log.subject(options.filter), start: options.startIn(log), follow: options.follow, batch: options.batch })),
  );
  const readers = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = opened.find((r) => r.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(readers.map((r) => r.close()));
    throw failed.reason;
  }
  return {
    sources: readers.map((reader, i) => ({ region: logs[i]!.region, messages: reader, startSeq: reader.startSeq, close: () => reader.close() })),
    pending: readers.reduce((n, r) => n + r.pending, 0),
    close: async () => void (await Promise.all(readers.map((r) => r.close()))),
  };
}

/** A message read as an operator's entry (null: not a payload the relay stored). */
export function entryOf(from: FromLog<JsMsg>): LogEntry | null {
  const m = from.message;
  return logEntry(m.headers, m.data, m.seq, m.time, from.region);
}

/** Where a read stands, as fromSeq spells it: a sequence, or with regions one per region (`eu:1042.us:77`). */
export function positionText(position: ReadonlyMap<string | null, number>, order: readonly string[]): string {
  const single = position.get(null);
  if (single !== undefined) return String(single);
  const seqs = new Map([...position].flatMap(([region, seq]) => (region === null ? [] : [[region, seq] as const])));
  return formatEventId({ kind: 'regions', seqs }, order);
}
