// Replay and live tail of one channel for the admin API, read from the event log with an ordered
// consumer (the CLI's `relay replay` reads the same way, with the same options: core/log-query.ts).

import type { Consumer, JetStreamClient } from '@nats-io/jetstream';
import { channelSubject, STREAM_NAME } from '../core/subjects.js';
import { logEntry, type LogEntry } from '../core/log-entry.js';
import type { LogQuery } from '../core/log-query.js';

export interface ReplayPage {
  entries: LogEntry[];
  /** More matched than the limit; the next page starts at nextSeq. */
  more: boolean;
  nextSeq: number | null;
}

export async function replayChannel(js: JetStreamClient, channel: string, query: LogQuery, limit: number): Promise<ReplayPage> {
  const consumer = await js.consumers.get(STREAM_NAME, { filter_subjects: channelSubject(channel), ...query.start });
  const entries: LogEntry[] = [];
  if ((await consumer.info(true)).num_pending === 0) {
    await forget(consumer);
    return { entries, more: false, nextSeq: null };
  }
  const messages = await consumer.consume({ max_messages: Math.min(1024, limit + 1) });
  let more = false;
  let nextSeq: number | null = null;
  try {
    for await (const m of messages) {
      const entry = logEntry(m.headers, m.data, m.seq, m.time);
      if (entry !== null && query.keep(entry)) {
        if (entries.length === limit) {
          more = true;
          nextSeq = entry.seq;
          break;
        }
        entries.push(entry);
      }
      if (m.info.pending === 0) break;
    }
  } finally {
    await messages.close();
    await forget(consumer);
  }
  return { entries, more, nextSeq };
}

export interface Tail {
  /** Stops reading; the consumer is gone from the server when this resolves. */
  close(): Promise<void>;
}

/** Follows a channel from `query.start`, calling `onEntry` for each entry `query.keep` keeps. */
export async function tailChannel(js: JetStreamClient, channel: string, query: LogQuery, onEntry: (e: LogEntry) => void): Promise<Tail> {
  const consumer = await js.consumers.get(STREAM_NAME, { filter_subjects: channelSubject(channel), ...query.start });
  const messages = await consumer.consume({ max_messages: 256 });
  const done = (async () => {
    for await (const m of messages) {
      const entry = logEntry(m.headers, m.data, m.seq, m.time);
      if (entry !== null && query.keep(entry)) onEntry(entry);
    }
  })().catch(() => undefined);
  return {
    async close() {
      await messages.close();
      await done;
      await forget(consumer);
    },
  };
}

/**
 * An ordered consumer outlives its reader by five minutes on the server unless deleted: a console
 * that replays or tails every few seconds would pile them up.
 */
async function forget(consumer: Consumer): Promise<void> {
  await consumer.delete().catch(() => undefined);
}
