// What relay replay and relay tail do (commands/replay.ts declares them): read the event log from a
// point, filtered, optionally following it live, one line or one JSON object per entry. With
// regions, every region's log as the home region holds it (core/operator-logs.ts): a bounded read
// oldest stored first across them, a live one as entries arrive; an entry is named <region>:<seq>.
import { DeliverPolicy, type JsMsg, type JetStreamManager } from '@nats-io/jetstream';
import { escapeControlChars, terminalSafeJson } from '../core/display.js';
import { summarise, type LogEntry } from '../core/log-entry.js';
import { fromSequence } from '../core/log-reader.js';
import { parseLogQuery, LogQueryError, type LogQuery, type LogQueryField } from '../core/log-query.js';
import { inArrivalOrder, MergedLog, type FromLog } from '../core/merged-log.js';
import { entryName } from '../../schemas/log-entry.js';
import { operatorLogs, type OperatorLog } from '../core/operator-logs.js';
import { entryOf, openOperatorRead } from '../core/operator-read.js';
import { channelSubject, STREAM_SUBJECTS } from '../core/subjects.js';
import { parseWholeNumber } from '../core/units.js';
import { loadConfig } from '../core/config.js';
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

function query(opts: ReadOptions, fromNow: boolean, regions: readonly string[] | null): LogQuery {
  try {
    return parseLogQuery(opts, fromNow, (f) => FLAGS[f], regions);
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
  const cols = [e.time, `#${entryName(e.region, e.seq)}`, ...(showChannel ? [e.meta.channel] : []), e.meta.uuid, e.meta.agent ?? '-', e.data.type, summarise(e.data)];
  // Every field but time and seq comes from a client: an ESC or CR in a chat line must not reach
  // the terminal, where it could erase the line and print a forged one.
  process.stdout.write(cols.map(escapeControlChars).join('  ') + '\n');
}

/**
 * "From now" as a sequence per log, not DeliverPolicy.New: the Listening line then promises every
 * payload stored after it, and a consumer re-created after a NATS hiccup resumes there instead of at
 * the oldest entry kept.
 */
async function startsNow(jsm: JetStreamManager, logs: readonly OperatorLog[]): Promise<Map<string, number>> {
  const ends = await Promise.all(logs.map(async (log) => [log.stream, (await jsm.streams.info(log.stream)).state.last_seq + 1] as const));
  return new Map(ends);
}

/** `fromNow`: with no --since/--from-seq, start at new payloads (tail) rather than the oldest kept (replay). */
async function readLog(filter: string, opts: ReadOptions, showChannel: boolean, fromNow: boolean): Promise<void> {
  const limit = opts.limit === undefined ? Infinity : parseWholeNumber(opts.limit);
  if (limit === null || limit < 1) throw new CliError(`--limit must be a whole number of at least 1, digits only (got "${opts.limit}").`, 2);
  const progress = process.stderr.isTTY && !opts.follow;
  // Refused before connecting: a mistyped option is said at once, NATS reachable or not.
  const config = loadConfig('all');
  const { keep, startIn } = query(opts, fromNow, config.regions?.all ?? null);
  await withAdmin({ config }, async (admin) => {
    const logs = operatorLogs(admin.config.regions);
    const now = startIn(null).deliver_policy === DeliverPolicy.New ? await startsNow(admin.nats.jsm, logs) : null;
    const follow = opts.follow === true;
    // Its consumers are deleted when the read ends (or the server would keep them five minutes).
    const read = await openOperatorRead(admin.nats.js, logs, {
      filter,
      startIn: (log) => (now === null ? startIn(log.region) : fromSequence(now.get(log.stream)!)),
      follow,
      batch: 1024,
    });
    const total = read.pending;
    if (total === 0 && !follow) {
      process.stderr.write('Nothing stored for this selection.\n');
      await read.close();
      return;
    }
    // Until this line a newcomer could not tell a tail still connecting from a quiet mesh.
    if (follow) process.stderr.write('Listening: payloads are shown as they are stored; Ctrl-C to stop.\n');
    const stop = (): void => void read.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const entries: AsyncIterable<FromLog<JsMsg>> = follow ? inArrivalOrder(read.sources) : new MergedLog(read.sources);
    let count = 0;
    let shown = 0;
    try {
      for await (const from of entries) {
        count++;
        const entry = entryOf(from);
        if (entry !== null && keep(entry)) {
          printEntry(entry, opts.json === true, showChannel);
          shown++;
        }
        if (progress && count % 5000 === 0) process.stderr.write(`\r${count} of ${total} read...`);
        if (shown >= limit) break;
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await read.close();
    }
    if (progress && count >= 5000) process.stderr.write(`\r${count} of ${total} read.   \n`);
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
