// Reading a range of one log as this gateway holds it (heard-logs.ts), for a group's gap fill and
// catch-up and for a resume: one message get after another (core/log-walk.ts), retried while the log
// cannot be read (a node down, a leader being elected). With regions, a range read from a copy may
// be ahead of the copy: the live feed (the origin's RePublish) can reach a gateway before the
// mirror has stored the same frame, so the read waits until the copy holds the range's end.

import type { JetStreamManager } from '@nats-io/jetstream';
import { newestOn, walkLog, type WalkedMsg } from '../../core/log-walk.js';
import type { ThrottledWarnings } from '../../core/logger.js';
import type { HeardLog } from './heard-logs.js';

/** How long a read keeps retrying while the log cannot be read, or a copy has not caught up. */
export const RECOVERY_DEADLINE_MS = 120_000;

export interface LogRange {
  log: HeardLog;
  filter: string;
  /** Re-evaluated on each attempt, so a retry continues where the last one stopped. */
  from: () => number;
  /** Last sequence read; null: to the log's newest as the attempt begins. */
  until: number | null;
  /** Whoever asked is gone (a client that left mid-resume): the read ends, waits included. */
  stopped?: () => boolean;
}

/** The copy has not stored the range's end yet. */
class CopyBehind extends Error {}

/**
 * Reads `range` in order into `onMessage`; returns how many messages it read. Throws the last
 * error once RECOVERY_DEADLINE_MS has passed without success.
 */
export async function readRange(jsm: JetStreamManager, range: LogRange, warnings: ThrottledWarnings, key: string, onMessage: (m: WalkedMsg) => boolean | void): Promise<number> {
  const { log, filter } = range;
  const deadline = Date.now() + RECOVERY_DEADLINE_MS;
  let delay = 100;
  let total = 0;
  for (;;) {
    if (range.stopped?.() === true) return total;
    try {
      const fromSeq = range.from();
      // To the log's end as the attempt begins: later frames reach the group live, and one get after
      // another could chase a busy log for ever. Asked of the stream's leader (cut off, of a replica: log-walk.ts).
      // A log's leader holds every sequence it has republished: only a copy, or with regions a log
      // that may be read from a replica behind its leader, is asked whether it does.
      const held = range.until === null || log.copy || log.local ? await newestOn(jsm, log.stream, log.subjects, log.local) : range.until;
      const end = range.until ?? held;
      if (end < fromSeq) return total;
      if (held < end) throw new CopyBehind(`${log.stream} holds up to ${held}, not yet ${end}`);
      const everySubject = filter === log.subjects;
      total += await walkLog(jsm, { stream: log.stream, filter, fromSeq, untilSeq: end, everySubject, local: log.local }, onMessage);
      return total;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      if (!(err instanceof CopyBehind)) warnings.warn(`recover-${key}`, { err, channel: key }, 'the log cannot be read yet; retrying');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }
}
