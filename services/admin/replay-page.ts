// A page of one channel's stored entries for the admin API's replay, read with the core log reader
// (core/log-reader.ts: its consumer is gone from the server when the page is read), with the same
// options as `relay replay` (core/log-query.ts).

import type { JetStreamClient } from '@nats-io/jetstream';
import { logEntry, type LogEntry } from '../core/log-entry.js';
import type { LogQuery } from '../core/log-query.js';
import { LogReader } from '../core/log-reader.js';
import { channelSubject } from '../core/subjects.js';

export interface ReplayPage {
  entries: LogEntry[];
  /** More matched than the limit; the next page starts at nextSeq. */
  more: boolean;
  nextSeq: number | null;
}

export async function replayChannel(js: JetStreamClient, channel: string, query: LogQuery, limit: number): Promise<ReplayPage> {
  const reader = await LogReader.open(js, { filter: channelSubject(channel), start: query.start, batch: Math.min(1024, limit + 1) });
  const entries: LogEntry[] = [];
  for await (const m of reader) {
    const entry = logEntry(m.headers, m.data, m.seq, m.time);
    if (entry === null || !query.keep(entry)) continue;
    if (entries.length === limit) return { entries, more: true, nextSeq: entry.seq };
    entries.push(entry);
  }
  return { entries, more: false, nextSeq: null };
}
