// The operator's way of reading the event log: an async iterator over a range of one subject filter
// of one stream, on an ordered consumer that is deleted from the server when the read ends, however
// it ends (the range read, the reader broke off, threw, or was closed from outside). Left to itself
// an ordered consumer outlives its reader by minutes on the server: a console that tails every few
// seconds would pile them up. Used by the admin service (replay, tail) and `relay replay`/`tail`,
// through core/operator-read.ts; the gateway reads by message gets instead (core/log-walk.ts).

import { DeliverPolicy, type Consumer, type ConsumerMessages, type JetStreamClient, type JsMsg, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { STREAM_NAME } from './subjects.js';

/** A bounded read that receives nothing for this long is abandoned (a node died under it). */
const STALL_MS = 10_000;

export interface LogRange {
  /** The stream read (default: the one event log of a mesh without regions). */
  stream?: string;
  /** Subject filter (one channel, or every channel). */
  filter: string;
  /** Where to start: a sequence, a time, the oldest kept or new messages only (core/log-query.ts). */
  start: Partial<OrderedConsumerOptions>;
  /** Stop after this sequence; null (default) reads until nothing is pending. */
  untilSeq?: number | null;
  /** After what is stored, keep reading new messages until closed (a tail: no stall watchdog). */
  follow?: boolean;
  /** Messages asked for at once. */
  batch?: number;
  /** A bounded read whose first message takes longer than this is a stall (default: STALL_MS). */
  firstWithinMs?: number;
}

/** A bounded read stopped making progress; the caller may retry from where it stopped. */
export class LogStalledError extends Error {
  readonly code = 'log_read_stalled';
  constructor(filter: string, read: number) {
    super(`reading ${filter} stalled after ${read} messages`);
    this.name = 'LogStalledError';
  }
}

/** From a sequence on (a resume, a gap fill): a sequence below the oldest kept starts at the oldest. */
export function fromSequence(seq: number): Partial<OrderedConsumerOptions> {
  return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, seq) };
}

export class LogReader implements AsyncIterable<JsMsg> {
  /** Messages stored in the range when the read began (what a progress display counts to). */
  readonly pending: number;
  /** The first sequence the read could deliver, whatever its start (a time, new messages only). */
  readonly startSeq: number;
  private readonly range: LogRange;
  private readonly consumer: Consumer;
  private messages: ConsumerMessages | null = null;
  private closing: Promise<void> | null = null;

  private constructor(range: LogRange, consumer: Consumer, pending: number, startSeq: number) {
    this.range = range;
    this.consumer = consumer;
    this.pending = pending;
    this.startSeq = startSeq;
  }

  /** Creates the consumer: iterate the reader, or close it, or the consumer stays on the server. */
  static async open(js: JetStreamClient, range: LogRange): Promise<LogReader> {
    const consumer = await js.consumers.get(range.stream ?? STREAM_NAME, { filter_subjects: range.filter, ...range.start });
    try {
      // Cached: the answer to the consumer's creation, no second request. A new consumer reports as
      // delivered the sequence before its start (nats-server resolves a start time to a sequence).
      const info = await consumer.info(true);
      return new LogReader(range, consumer, info.num_pending, info.delivered.stream_seq + 1);
    } catch (err) {
      await consumer.delete().catch(() => undefined);
      throw err;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<JsMsg> {
    const { untilSeq = null, follow = false } = this.range;
    try {
      if (this.closing !== null || (!follow && this.pending === 0)) return;
      const messages = await this.consumer.consume({ max_messages: this.range.batch ?? 512 });
      this.messages = messages;
      // Closed while the subscription was being made: its end is read by the loop below (nats.js
      // ends the messages only once they are read, so waiting for it here would wait for ever).
      if (this.closing !== null) messages.close().catch(() => undefined);
      let read = 0;
      let progress = Date.now();
      // Held at a message it gave (a merged read hands on the oldest first): not a stall.
      let held = false;
      let done = follow;
      const watchdog = follow
        ? undefined
        : setInterval(() => {
            if (!held && Date.now() - progress > (read === 0 ? (this.range.firstWithinMs ?? STALL_MS) : STALL_MS)) void messages.close();
          }, Math.min(STALL_MS, this.range.firstWithinMs ?? STALL_MS) / 4);
      try {
        for await (const m of messages) {
          progress = Date.now();
          if (untilSeq !== null && m.seq > untilSeq) {
            done = true;
            break;
          }
          read++;
          held = true;
          yield m;
          held = false;
          progress = Date.now();
          if (!follow && (m.info.pending === 0 || m.seq === untilSeq)) {
            done = true;
            break;
          }
        }
      } finally {
        clearInterval(watchdog);
      }
      // Closed from outside (close()) is an end, not a stall.
      if (!done && this.closing === null) throw new LogStalledError(this.range.filter, read);
    } finally {
      await this.close();
    }
  }

  /**
   * Stops reading; the consumer is deleted from the server when this resolves. The messages' own
   * close is not awaited: nats.js ends their iteration only once the iterating code asks for its
   * next message, which a read held at a message it gave (several logs merged) may not do. Until it
   * does, an ordered consumer reset already under way in nats.js could make the consumer again (it
   * then lingers its 5 minutes of inactivity); the merged reads here resume every reader they hold.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.messages?.close().catch(() => undefined);
      await this.consumer.delete().catch(() => undefined);
    })();
    return this.closing;
  }
}

/** Reads a range to its end, calling `onMessage` for each message; stops early when it returns false. */
export async function readRange(js: JetStreamClient, range: LogRange, onMessage: (m: JsMsg) => boolean | void): Promise<number> {
  const reader = await LogReader.open(js, range);
  let count = 0;
  for await (const m of reader) {
    if (onMessage(m) === false) break;
    count++;
  }
  return count;
}
