// The operator's read of the event log (relay replay and tail, the admin API's replay and tail): a
// reader per log the operator's tools read (operator-logs.ts), each from where the query starts in
// it, joined by merged-log.ts. Every consumer it made is deleted when the read is closed or ends.

import type { JsMsg, JetStreamClient, OrderedConsumerOptions } from '@nats-io/jetstream';
import { formatEventId } from '../../schemas/event-id.js';
import { logEntry, type LogEntry } from './log-entry.js';
import { fromSequence, LogReader, LogStalledError, type LogRange } from './log-reader.js';
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

/**
 * How long a bounded read waits for a log's first message before asking again: a pull sent across
 * regions to a consumer just made is now and then lost (seen by a stranger's attack: 2 in 60 tries),
 * and nats.js would notice only after two missed heartbeats, about 30 s.
 */
const FIRST_WITHIN_MS = 2_000;
/** Stalled reads of one log made again, each from where it stopped, before the read fails. */
const STALL_RETRIES = 3;

function rangeOf(log: OperatorLog, options: ReadOptions, start: Partial<OrderedConsumerOptions>): LogRange {
  return { stream: log.stream, filter: log.subject(options.filter), start, follow: options.follow, batch: options.batch, ...(options.follow ? {} : { firstWithinMs: FIRST_WITHIN_MS }) };
}

export async function openOperatorRead(js: JetStreamClient, logs: readonly OperatorLog[], options: ReadOptions): Promise<OperatorRead> {
  const opened = await Promise.allSettled(logs.map((log) => LogReader.open(js, rangeOf(log, options, options.startIn(log)))));
  const readers = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = opened.find((r) => r.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(readers.map((r) => r.close()));
    throw failed.reason;
  }
  const sources = readers.map((reader, i) => retrying(js, logs[i]!, options, reader));
  return {
    sources,
    pending: readers.reduce((n, r) => n + r.pending, 0),
    close: async () => void (await Promise.all(sources.map((s) => s.close()))),
  };
}

/** One log's messages; a read that stalls is made again from where it stopped, STALL_RETRIES times. */
function retrying(js: JetStreamClient, log: OperatorLog, options: ReadOptions, first: LogReader): MergeSource<JsMsg> {
  let current = first;
  let closed = false;
  async function* messages(): AsyncGenerator<JsMsg> {
    let next: number | null = null;
    for (let stalls = 0; ; ) {
      try {
        for await (const m of current) {
          next = m.seq + 1;
          stalls = 0;
          yield m;
        }
        return;
      } catch (e) {
        if (!(e instanceof LogStalledError) || closed || ++stalls > STALL_RETRIES) throw e;
        current = await LogReader.open(js, rangeOf(log, options, next === null ? options.startIn(log) : fromSequence(next)));
        if (closed) {
          await current.close();
          return;
        }
      }
    }
  }
  return {
    region: log.region,
    startSeq: first.startSeq,
    messages: messages(),
    close: async () => {
      closed = true;
      await current.close();
    },
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
