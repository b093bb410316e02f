// A page of one channel's stored entries for the admin API's replay, with the same options as
// `relay replay` (core/log-query.ts), read from every log the operator's tools read (with regions,
// each region's, oldest stored first: core/operator-read.ts). Its consumers are gone from the
// server when the page is read.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { LogEntry } from '../core/log-entry.js';
import type { LogQuery } from '../core/log-query.js';
import { MergedLog } from '../core/merged-log.js';
import { regionOrder, type OperatorLog } from '../core/operator-logs.js';
import { entryOf, openOperatorRead, positionText } from '../core/operator-read.js';
import { channelSubject } from '../core/subjects.js';

export interface ReplayPage {
  entries: LogEntry[];
  /** More matched than the limit; the next page starts at nextFrom. */
  more: boolean;
  /** nextFrom as a number, on a mesh without regions (null with regions). */
  nextSeq: number | null;
  nextFrom: string | null;
}

export async function replayChannel(js: JetStreamClient, logs: readonly OperatorLog[], channel: string, query: LogQuery, limit: number): Promise<ReplayPage> {
  const read = await openOperatorRead(js, logs, { filter: channelSubject(channel), startIn: (log) => query.startIn(log.region), follow: false, batch: Math.min(1024, limit + 1) });
  const merged = new MergedLog(read.sources);
  const entries: LogEntry[] = [];
  try {
    for await (const from of merged) {
      const entry = entryOf(from);
      if (entry === null || !query.keep(entry)) continue;
      if (entries.length === limit) {
        // This entry is the next page's first.
        const position = merged.position().set(from.region, entry.seq);
        return { entries, more: true, nextSeq: from.region === null ? entry.seq : null, nextFrom: positionText(position, regionOrder(logs)) };
      }
      entries.push(entry);
    }
  } finally {
    await read.close();
  }
  return { entries, more: false, nextSeq: null, nextFrom: null };
}
