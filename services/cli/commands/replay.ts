// relay replay <channel> and relay tail: read the event log, optionally following it live.
import type { Command } from 'commander';
import { DeliverPolicy, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { normaliseUuid } from '../../../schemas/uuid.js';
import { isPayloadType } from '../../../schemas/payload-types.js';
import { escapeControlChars, terminalSafeJson } from '../../core/display.js';
import { logEntry, summarise, type LogEntry } from '../../core/log-entry.js';
import { channelSubject, STREAM_NAME, STREAM_SUBJECTS } from '../../core/subjects.js';
import { parseSince, parseWholeNumber } from '../../core/units.js';
import { CliError, withAdmin } from '../admin.js';
import { channelArg } from '../args.js';

interface ReadOptions {
  since?: string;
  fromSeq?: string;
  follow?: boolean;
  type?: string;
  sender?: string;
  json?: boolean;
  limit?: string;
}

function startFrom(opts: ReadOptions, fromNow: boolean): Partial<OrderedConsumerOptions> {
  if (opts.since !== undefined && opts.fromSeq !== undefined) throw new CliError('Use --since or --from-seq, not both.', 2);
  if (opts.fromSeq !== undefined) {
    // Beyond 2^53 a sequence is no longer exact in JavaScript, and NATS refuses it as "invalid JSON".
    const seq = parseWholeNumber(opts.fromSeq);
    if (seq === null) throw new CliError(`--from-seq must be a stream sequence number, digits only, at most ${Number.MAX_SAFE_INTEGER} (got "${opts.fromSeq}").`, 2);
    return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, seq) };
  }
  if (opts.since !== undefined) {
    const since = parseSince(opts.since);
    if (!since.ok) throw new CliError(`--since ${since.problem} (got "${opts.since}").`, 2);
    return { deliver_policy: DeliverPolicy.StartTime, opt_start_time: since.iso };
  }
  return { deliver_policy: fromNow ? DeliverPolicy.New : DeliverPolicy.All };
}

function filters(opts: ReadOptions): (e: LogEntry) => boolean {
  const types = opts.type?.split(',').map((t) => t.trim()).filter((t) => t !== '');
  // --type "" would match nothing and print nothing, which reads as "no such payloads".
  if (types?.length === 0) throw new CliError('--type needs at least one payload type.', 2);
  for (const t of types ?? []) if (!isPayloadType(t)) throw new CliError(`--type: "${t}" is not a payload type.`, 2);
  let sender: string | null = null;
  if (opts.sender !== undefined) {
    sender = normaliseUuid(opts.sender);
    if (sender === null) throw new CliError(`--sender must be a UUID (got "${opts.sender}").`, 2);
  }
  return (e) => (types === undefined || types.includes(e.data.type)) && (sender === null || e.meta.uuid === sender);
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
  const keep = filters(opts);
  const start = startFrom(opts, fromNow);
  const limit = opts.limit === undefined ? Infinity : parseWholeNumber(opts.limit);
  if (limit === null || limit < 1) throw new CliError(`--limit must be a whole number of at least 1, digits only (got "${opts.limit}").`, 2);
  const progress = process.stderr.isTTY && !opts.follow;
  await withAdmin({}, async (admin) => {
    const consumer = await admin.nats.js.consumers.get(STREAM_NAME, { filter_subjects: filter, ...start });
    const info = await consumer.info(true);
    const total = info.num_pending;
    if (total === 0 && !opts.follow) {
      process.stderr.write('Nothing stored for this selection.\n');
      return;
    }
    const messages = await consumer.consume({ max_messages: 1024 });
    const stop = (): void => void messages.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let read = 0;
    let shown = 0;
    for await (const m of messages) {
      read++;
      const entry = logEntry(m.headers, m.data, m.seq, m.time);
      if (entry !== null && keep(entry)) {
        printEntry(entry, opts.json === true, showChannel);
        shown++;
      }
      if (progress && read % 5000 === 0) process.stderr.write(`\r${read} of ${total} read...`);
      if (shown >= limit) break;
      if (!opts.follow && m.info.pending === 0) break;
    }
    if (progress && read >= 5000) process.stderr.write(`\r${read} of ${total} read.   \n`);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await messages.close();
  });
}

function addReadOptions(cmd: Command): Command {
  return cmd
    .option('--since <when>', 'start this long ago (10m, 2h, 7d) or at an ISO 8601 date or time (2030-01-31T12:00:00Z)')
    .option('--from-seq <n>', 'start at this stream sequence')
    .option('--follow', 'after what is stored, keep printing new payloads until Ctrl-C')
    .option('--type <types>', 'only these payload types (comma-separated)')
    .option('--sender <uuid>', 'only payloads sent by (or re-attributed to) this account')
    .option('--limit <n>', 'stop after printing this many')
    .option('--json', 'one {"seq","time","meta","data"} object per line, for jq');
}

export function registerReplay(program: Command): void {
  addReadOptions(
    program
      .command('replay')
      .description("print a channel's stored payloads (time, sequence, sender, agent, type, summary)")
      .argument('<channel>', 'the multiplayer server host, as clients name it'),
  ).action(async (channel: string, opts: ReadOptions) => {
    await readLog(channelSubject(channelArg(channel)), opts, false, false);
  });

  addReadOptions(program.command('tail').description('every channel, live from now (or from --since/--from-seq)')).action(
    async (opts: ReadOptions) => {
      const live = opts.since === undefined && opts.fromSeq === undefined;
      await readLog(STREAM_SUBJECTS, { ...opts, follow: opts.follow ?? live }, true, live);
    },
  );
}
