// relay trace <seq>: the trace id of one stored entry, read from the `traceparent` its ingress wrote
// into the message headers, so an operator can look it up in their tracing backend.
import type { Command } from 'commander';
import { escapeControlChars } from '../../core/display.js';
import type { EventPosition } from '../../../schemas/event-id.js';
import { parseWholeNumber } from '../../core/units.js';
import { CliError } from '../cli-error.js';
import { printJson } from '../output.js';

interface TraceAnswer {
  /** With regions: the region whose log holds the entry. */
  region?: string;
  seq: number;
  channel: string;
  /** Null when the entry was stored with tracing off (or by a relay older than tracing). */
  traceId: string | null;
  /** False when the trace was not sampled: the backend has no spans for it. */
  sampled: boolean;
}

export function registerTrace(program: Command): void {
  program
    .command('trace')
    .description('the trace id of a stored entry (from its traceparent header), to find it in the tracing backend')
    .argument('<seq>', 'the entry’s sequence (# in relay replay; without regions the SSE id); with regions <region>:<seq>, like eu:1042')
    .option('--json', 'print one JSON object')
    .action(async (seqText: string, opts: { json?: boolean }) => {
      // Loaded when it runs: `relay --help` does not load the mesh's code.
      const [{ withAdmin }, { Header }, { operatorLogs, regionOrder }, { traceIdOf }, { parseEventId }, { entryName }] = await Promise.all([
        import('../admin.js'),
        import('../../core/wire-headers.js'),
        import('../../core/operator-logs.js'),
        import('../../core/tracing.js'),
        import('../../../schemas/event-id.js'),
        import('../../../schemas/log-entry.js'),
      ]);
      // A malformed argument is refused before connecting; whether its region is one of this mesh's, after.
      const whole = parseWholeNumber(seqText);
      if (whole === null ? parseEventId(seqText)?.kind !== 'regions' : whole < 1) {
        throw new CliError(`<seq> must be a whole number of at least 1, digits only, or <region>:<seq> on a mesh with regions (got "${seqText.slice(0, 64)}").`, 2);
      }
      const answer = await withAdmin({}, async (admin): Promise<TraceAnswer> => {
        const logs = operatorLogs(admin.config.regions);
        const { region, seq } = entryOf(seqText, regionOrder(logs), parseEventId);
        const log = logs.find((l) => l.region === region)!;
        const name = `#${entryName(region, seq)}`;
        const m = await admin.nats.jsm.streams.getMessage(log.stream, { seq }).catch((e: unknown) => {
          throw new CliError(`No entry ${name} is stored (${e instanceof Error ? e.message : String(e)}): it may have aged out of the event log.`);
        });
        if (m === null) throw new CliError(`No entry ${name} is stored: it may have aged out of the event log.`);
        const traced = traceIdOf(m.header);
        return { ...(region === null ? {} : { region }), seq, channel: m.header.get(Header.Channel), traceId: traced?.traceId ?? null, sampled: traced?.sampled ?? false };
      });
      if (opts.json === true) {
        printJson(answer);
        return;
      }
      const where = `#${entryName(answer.region, answer.seq)} (${escapeControlChars(answer.channel)})`;
      if (answer.traceId === null) process.stdout.write(`${where} was not traced: it was stored while tracing was off.\n`);
      else if (!answer.sampled) process.stdout.write(`${where} trace ${answer.traceId}, not sampled: the backend has no spans for it.\n`);
      else process.stdout.write(`${where} trace ${answer.traceId}\n`);
    });
}

/** The entry an argument names: a sequence, or with regions (`regions` not empty) <region>:<seq>. */
function entryOf(text: string, regions: readonly string[], parse: (t: string) => EventPosition | null): { region: string | null; seq: number } {
  if (regions.length === 0) {
    const seq = parseWholeNumber(text);
    if (seq === null || seq < 1) throw new CliError(`<seq> must be a whole number of at least 1, digits only (got "${text.slice(0, 64)}").`, 2);
    return { region: null, seq };
  }
  const position = parse(text);
  const one = position?.kind === 'regions' && position.seqs.size === 1 ? [...position.seqs][0]! : null;
  if (one === null || !regions.includes(one[0]) || one[1] < 1) {
    throw new CliError(`<seq> names an entry as <region>:<seq> on a mesh with regions, the region one of ${regions.join(', ')} (like ${regions[0]}:1042; got "${text.slice(0, 64)}").`, 2);
  }
  return { region: one[0], seq: one[1] };
}
