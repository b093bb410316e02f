// What relay setup does (commands/setup.ts declares it): create or bring to the settings every stream
// and bucket of the relay, with the operator's NATS credentials, and say what changed and how durable
// the result is.
import { jetstreamManager } from '@nats-io/jetstream';
import { loadConfig } from '../core/config.js';
import { maskServerList } from '../core/secret-shapes.js';
import { durabilityFacts, durabilityStatement } from '../core/durability.js';
import { createLogger } from '../core/logger.js';
import { checkNatsLayout } from '../core/nats-check.js';
import { natsLayout } from '../core/nats-layout.js';
import { isMetaUnavailable } from '../core/jetstream-errors.js';
import { NatsSetupError } from '../core/nats-refusal.js';
import { setupNats, type SetupOutcome } from '../core/nats-setup.js';
import { connectNats, retry } from '../core/nats.js';
import { isKvStream } from '../core/kv-internals.js';
import { rebuildWithFeed } from '../core/bucket-rebuild.js';
import { writtenLog } from '../core/subjects.js';
import { CliError } from './cli-error.js';
import { printJson } from './output.js';

/**
 * How long setup waits for JetStream's meta group: a super-cluster just started, or a region's servers
 * back from a restart, leave it without an answer for some seconds (CI saw setup refused after both).
 */
const META_WAIT_MS = 30_000;

/** What setup says when the meta group never answered. */
function metaSilence(e: unknown): never {
  if (isMetaUnavailable(e)) throw new CliError(`JetStream's meta group has not answered for ${META_WAIT_MS / 1000} s (a region cut off or restarting, a leader being elected, a cluster just started): run relay setup again once every region's servers are up and linked.`);
  throw e;
}

const WORDS: Record<SetupOutcome['action'], string> = { created: 'created', updated: 'updated', unchanged: 'as set' };

export async function setupMesh(opts: { dryRun?: boolean; json?: boolean; rebuildFeeds?: boolean }): Promise<void> {
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
    // Each of setup's questions of JetStream, the first (the account's) too: a super-cluster just
    // started may not answer it yet.
    const ask = <T>(fn: () => Promise<T>): Promise<T> => retry(fn, logger, 3, META_WAIT_MS).catch(metaSilence);
    const jsm = await ask(() => jetstreamManager(nc));
    const layout = natsLayout(config);
    const dryRun = opts.dryRun === true;
    if (opts.rebuildFeeds === true) {
      if (dryRun) throw new CliError('--rebuild-feeds changes streams: it has no dry run (a plain --dry-run says which buckets lack their feed).', 2);
      for (const plan of layout) if (plan.bucket !== undefined) await rebuildWithFeed(jsm, plan, logger);
    }
    const setup = (): Promise<SetupOutcome[]> => setupNats(jsm, layout, { dryRun, onWait: (sentence) => logger.warn(sentence) });
    const outcomes = await ask(setup).catch((e: unknown) => {
      if (e instanceof NatsSetupError) throw new CliError(e.message);
      throw e;
    });
    const found = dryRun ? null : await ask(() => checkNatsLayout(jsm, layout, new Set()));
    // With regions, the durability said is of one region's log (this process's, or the home region's): setup gives every region's the same settings.
    const log = found?.found.get(writtenLog(config.regions === null ? null : (config.regions.here ?? config.regions.home)).stream);
    const buckets = [...(found?.found.entries() ?? [])].filter(([name]) => isKvStream(name)).map(([, info]) => info);
    const durability = log === undefined ? null : durabilityStatement(durabilityFacts(nc.info?.version ?? 'unknown', log, buckets));
    if (opts.json) printJson({ streams: outcomes, durability });
    else process.stdout.write(report(outcomes, servers, nc.info?.version ?? 'unknown', dryRun, durability));
    // A stream the services cannot work with (sealed) is a failure, whatever else went well.
    if ((found?.problems.length ?? 0) > 0) throw new CliError(found?.problems.join(' ') ?? '');
  } finally {
    await nc.close().catch(() => undefined);
  }
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
