// relay trace <seq>: the trace id of one stored entry, read from the `traceparent` its ingress wrote
// into the message headers, so an operator can look it up in their tracing backend.
import type { Command } from 'commander';
import { escapeControlChars } from '../../core/display.js';
import { parseWholeNumber } from '../../core/units.js';
import { CliError } from '../cli-error.js';
import { printJson } from '../output.js';

interface TraceAnswer {
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
    .argument('<seq>', 'the entry’s sequence (the SSE id, or # in relay replay)')
    .option('--json', 'print one JSON object')
    .action(async (seqText: string, opts: { json?: boolean }) => {
      const seq = parseWholeNumber(seqText);
      if (seq === null || seq < 1) throw new CliError(`<seq> must be a whole number of at least 1, digits only (got "${seqText}").`, 2);
      // Loaded when it runs: `relay --help` does not load the mesh's code.
      const [{ withAdmin }, { Header }, { STREAM_NAME }, { traceIdOf }] = await Promise.all([
        import('../admin.js'),
        import('../../core/wire-headers.js'),
        import('../../core/subjects.js'),
        import('../../core/tracing.js'),
      ]);
      const answer = await withAdmin({ readsOneLog: 'relay trace' }, async (admin): Promise<TraceAnswer> => {
        const m = await admin.nats.jsm.streams.getMessage(STREAM_NAME, { seq }).catch((e: unknown) => {
          throw new CliError(`No entry #${seq} is stored (${e instanceof Error ? e.message : String(e)}): it may have aged out of the event log.`);
        });
        if (m === null) throw new CliError(`No entry #${seq} is stored: it may have aged out of the event log.`);
        const traced = traceIdOf(m.header);
        return { seq, channel: m.header.get(Header.Channel), traceId: traced?.traceId ?? null, sampled: traced?.sampled ?? false };
      });
      if (opts.json === true) {
        printJson(answer);
        return;
      }
      const where = `#${answer.seq} (${escapeControlChars(answer.channel)})`;
      if (answer.traceId === null) process.stdout.write(`${where} was not traced: it was stored while tracing was off.\n`);
      else if (!answer.sampled) process.stdout.write(`${where} trace ${answer.traceId}, not sampled: the backend has no spans for it.\n`);
      else process.stdout.write(`${where} trace ${answer.traceId}\n`);
    });
}
