// What relay replay and relay tail do (commands/replay.ts declares them): read the event log from a
// point, filtered, optionally following it live, one line or one JSON object per entry.
import { DeliverPolicy } from '@nats-io/jetstream';
import { escapeControlChars, terminalSafeJson } from '../core/display.js';
import { logEntry, summarise, type LogEntry } from '../core/log-entry.js';
import { fromSequence, LogReader } from '../core/log-reader.js';
import { channelSubject, STREAM_NAME, STREAM_SUBJECTS } from '../core/subjects.js';
import { parseLogQuery, LogQueryError, type LogQuery, type LogQueryField } from '../core/log-query.js';
import { parseWholeNumber } from '../core/units.js';
import { CliError } from './cli-error.js';
import { withAdmin } from './admin.js';
import { channelArg } from './args.js';

export interface ReadOptions {
  since?: string;
  fromSeq?: string;
  follow?: boolean;
  type?: string;
  sender?: string;
  json?: boolean;
  limit?: string;
}

const FLAGS: Record<LogQueryField, string> = { since: '--since', fromSeq: '--from-seq', type: '--type', sender: '--sender' };

function query(opts: ReadOptions, fromNow: boolean): LogQuery {
  try {
    return parseLogQuery(opts, fromNow, (f) => FLAGS[f]);
  } catch (e) {
    if (e instanceof LogQueryError) throw new CliError(e.message, 2);
    throw e;
  }
}

function printEntry(e: LogEntry, json: boolean, showChannel: boolean): void {
  if (json) {
    process.stdout.write(terminalSafeJson(e) + '\n');
    return;
  }
  const cols = [e.time, `#${e.seq}`, ...(showChannel ? [e.meta.channel] : []), e.meta.uuid, e.meta.agent ?? '-', e.data.type, summarise(e.data)];
  // Every field but time and seq comes from a client: an ESC or CR in a chat line must not reach
  // the terminal, where it could erase the line and print a forged one.
  process.stdout.write(cols.map(escapeControlChars).join('  ') + '\n');
}

/** `fromNow`: with no --since/--from-seq, start at new payloads (tail) rather than the oldest kept (replay). */
async function readLog(filter: string, opts: ReadOptions, showChannel: boolean, fromNow: boolean): Promise<void> {
  const { keep, start } = query(opts, fromNow);
  const limit = opts.limit === undefined ? Infinity : parseWholeNumber(opts.limit);
  if (limit === null || limit < 1) throw new CliError(`--limit must be a whole number of at least 1, digits only (got "${opts.limit}").`, 2);
  const progress = process.stderr.isTTY && !opts.follow;
  await withAdmin({ readsOneLog: showChannel ? 'relay tail' : 'relay replay' }, async (admin) => {
    // "From now" as a sequence, not DeliverPolicy.New: the Listening line below then promises every
    // payload stored after it, and a consumer re-created after a NATS hiccup resumes there instead of
    // at the oldest entry kept.
    const from = start.deliver_policy === DeliverPolicy.New ? fromSequence((await admin.nats.jsm.streams.info(STREAM_NAME)).state.last_seq + 1) : start;
    // Its consumer is deleted when the read ends (or the server would keep it five minutes).
    const reader = await LogReader.open(admin.nats.js, { filter, start: from, follow: opts.follow === true, batch: 1024 });
    const total = reader.pending;
    if (total === 0 && !opts.follow) {
      process.stderr.write('Nothing stored for this selection.\n');
      await reader.close();
      return;
    }
    // Until this line a newcomer could not tell a tail still connecting from a quiet mesh.
    if (opts.follow) process.stderr.write('Listening: payloads are shown as they are stored; Ctrl-C to stop.\n');
    const stop = (): void => void reader.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let read = 0;
    let shown = 0;
    try {
      for await (const m of reader) {
        read++;
        const entry = logEntry(m.headers, m.data, m.seq, m.time);
        if (entry !== null && keep(entry)) {
          printEntry(entry, opts.json === true, showChannel);
          shown++;
        }
        if (progress && read % 5000 === 0) process.stderr.write(`\r${read} of ${total} read...`);
        if (shown >= limit) break;
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    if (progress && read >= 5000) process.stderr.write(`\r${read} of ${total} read.   \n`);
  });
}

/** relay replay <channel>: what is stored for one channel. */
export async function replayChannel(channel: string, opts: ReadOptions): Promise<void> {
  await readLog(channelSubject(channelArg(channel)), opts, false, false);
}

/** relay tail: every channel, live from now unless told where to start. */
export async function tailAll(opts: ReadOptions): Promise<void> {
  const live = opts.since === undefined && opts.fromSeq === undefined;
  await readLog(STREAM_SUBJECTS, { ...opts, follow: opts.follow ?? live }, true, live);
}
