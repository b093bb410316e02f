// Reads a range of the event log for one subject filter: used to replay what a resuming client
// missed (Last-Event-ID) and to fill gaps in the live feed. An ordered consumer starting at a
// sequence below the oldest kept message simply starts at the oldest: retention is respected.

import { DeliverPolicy, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import { STREAM_NAME } from '../core/subjects.js';

const STALL_MS = 10_000;

export interface ReadRange {
  filter: string;
  fromSeq: number;
  /** Stop after this sequence; null reads until nothing is pending. */
  untilSeq: number | null;
}

/**
 * Calls `onMessage` for every stored message in the range, in order; resolves when done, or as soon
 * as `onMessage` returns false (its reader has gone).
 */
export async function readLog(js: JetStreamClient, range: ReadRange, onMessage: (m: JsMsg) => boolean | void): Promise<number> {
  if (range.untilSeq !== null && range.untilSeq < range.fromSeq) return 0;
  const consumer = await js.consumers.get(STREAM_NAME, {
    filter_subjects: range.filter,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: Math.max(1, range.fromSeq),
  });
  const info = await consumer.info(true);
  if (info.num_pending === 0) return 0;
  let count = 0;
  let done = false;
  let progress = Date.now();
  const messages = await consumer.consume({ max_messages: 512 });
  // A read that stops making progress (a node died under it) is abandoned; the caller retries from
  // where it stopped.
  const watchdog = setInterval(() => {
    if (Date.now() - progress > STALL_MS) void messages.close();
  }, STALL_MS / 4);
  try {
    for await (const m of messages) {
      progress = Date.now();
      if (range.untilSeq !== null && m.seq > range.untilSeq) {
        done = true;
        break;
      }
      if (onMessage(m) === false) {
        done = true;
        break;
      }
      count++;
      if (m.info.pending === 0 || m.seq === range.untilSeq) {
        done = true;
        break;
      }
    }
  } finally {
    clearInterval(watchdog);
    await messages.close();
  }
  if (!done) throw new Error(`reading ${range.filter} from ${range.fromSeq} stalled after ${count} messages`);
  return count;
}

/** First and last sequence the log holds now. */
export async function logBounds(js: JetStreamClient): Promise<{ first: number; last: number }> {
  const jsm = await js.jetstreamManager();
  const info = await jsm.streams.info(STREAM_NAME);
  return { first: info.state.first_seq, last: info.state.last_seq };
}
