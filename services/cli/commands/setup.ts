// relay setup: creates the relay's streams and buckets and brings them to the operator's settings
// (STREAM_*, KV_REPLICAS, CLAIM_TTL, AUDIT_MAX_AGE, IDEMPOTENCY_MAX_BYTES), with the operator's NATS
// credentials. The services never do: they start against what exists. Safe to run again: it prints
// what it changed, or that nothing needed changing.
import type { Command } from 'commander';
import { jetstreamManager } from '@nats-io/jetstream';
import { loadConfig } from '../../core/config.js';
import { maskServerList } from '../../core/secret-shapes.js';
import { durabilityFacts, durabilityStatement } from '../../core/durability.js';
import { createLogger } from '../../core/logger.js';
import { checkNatsLayout } from '../../core/nats-check.js';
import { natsLayout } from '../../core/nats-layout.js';
import { NatsSetupError } from '../../core/nats-refusal.js';
import { setupNats, type SetupOutcome } from '../../core/nats-setup.js';
import { connectNats, retry } from '../../core/nats.js';
import { isKvStream } from '../../core/kv-internals.js';
import { STREAM_NAME } from '../../core/subjects.js';
import { CliError } from '../admin.js';
import { printJson } from '../output.js';

const WORDS: Record<SetupOutcome['action'], string> = { created: 'created', updated: 'updated', unchanged: 'as set' };

export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description("create the relay's streams and buckets and apply STREAM_*, KV_REPLICAS, CLAIM_TTL, AUDIT_MAX_AGE and IDEMPOTENCY_MAX_BYTES (operator's NATS credentials)")
    .option('--dry-run', 'say what would change, change nothing')
    .option('--json', 'print {"streams":[{"stream","label","action","changes","notes"}],"durability"}')
    .action(async (opts: { dryRun?: boolean; json?: boolean }) => {
      const config = loadConfig('all');
      const logger = createLogger({ level: process.env['LOG_LEVEL'] ?? 'warn', pretty: false, destination: process.stderr });
      const servers = maskServerList(config.nats.servers);
      let nc;
      try {
        nc = await connectNats(config, 'relay-setup', logger, { failFast: true, role: 'cli' });
      } catch (e) {
        if (e instanceof NatsSetupError) throw new CliError(e.message);
        throw new CliError(`Cannot reach NATS at ${servers} (set NATS_URL): ${e instanceof Error ? e.message : String(e)}.`);
      }
      try {
        const jsm = await jetstreamManager(nc);
        const layout = natsLayout(config);
        const dryRun = opts.dryRun === true;
        const outcomes = await retry(() => setupNats(jsm, layout, { dryRun }), logger, 3).catch((e: unknown) => {
          if (e instanceof NatsSetupError) throw new CliError(e.message);
          throw e;
        });
        const found = dryRun ? null : await checkNatsLayout(jsm, layout, new Set());
        const log = found?.found.get(STREAM_NAME);
        const buckets = [...(found?.found.entries() ?? [])].filter(([name]) => isKvStream(name)).map(([, info]) => info);
        const durability = log === undefined ? null : durabilityStatement(durabilityFacts(nc.info?.version ?? 'unknown', log, buckets));
        if (opts.json) printJson({ streams: outcomes, durability });
        else process.stdout.write(report(outcomes, servers, nc.info?.version ?? 'unknown', dryRun, durability));
        // A stream the services cannot work with (sealed) is a failure, whatever else went well.
        if ((found?.problems.length ?? 0) > 0) throw new CliError(found?.problems.join(' ') ?? '');
      } finally {
        await nc.close().catch(() => undefined);
      }
    });
}

function report(outcomes: SetupOutcome[], servers: string, version: string, dryRun: boolean, durability: string | null): string {
  const lines = [`NATS at ${servers} (nats-server ${version})${dryRun ? ': a dry run, nothing changed' : ''}`];
  for (const o of outcomes) {
    const word = dryRun && o.action !== 'unchanged' ? `would be ${o.action}` : WORDS[o.action];
    lines.push(`  ${word.padEnd(16)} ${o.label}${o.action === 'updated' ? `: ${o.changes.join('; ')}` : ''}`);
    for (const note of o.notes) lines.push(`  ${'note'.padEnd(16)} ${note}`);
  }
  const changed = outcomes.filter((o) => o.action !== 'unchanged').length;
  lines.push(changed === 0 ? 'Nothing to change: every stream and bucket is as configured.' : `${changed} of ${outcomes.length} ${dryRun ? 'would change' : 'changed'}.`);
  if (durability !== null) lines.push(`Durability: ${durability}`);
  return `${lines.join('\n')}\n`;
}
