// npm run chaos [-- --minutes 2 --seed 42]: the relay's fault campaign (docs/RELIABILITY.md). A
// three-node NATS cluster, gateways and ingresses as separate processes, clients of our own library,
// a seeded nemesis, and a checker that classifies every acknowledged POST and every frame a reader
// received. Exits 1 on any anomaly, 2 when the campaign itself could not run. With `--regions 3`
// the same for a mesh of regions under region faults (region-run.ts).

import { Command, InvalidArgumentError } from 'commander';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findNatsServer } from '../nats-launcher.js';
import { runCampaign } from './campaign.js';
import { freshSeed } from './random.js';
import { runRegionsFromCli } from './region-run.js';
import { REGION_FAULT_KINDS, type RegionFaultKind } from './region-schedule.js';
import { buildReport, formatReport, writeReport } from './report.js';
import { FAULT_KINDS, type FaultKind } from './schedule.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a positive number');
  return n;
}

/** Checked against the kinds of the campaign asked for (one log's, or with --regions the region faults) once all options are read. */
function kinds(value: string): string[] {
  return value.split(',').map((k) => k.trim().replace(/-/g, ' '));
}

function regionCount(value: string): number {
  const n = Number(value);
  // JetStream's meta group needs a majority of regions (docs/REGIONS.md); the names are a..p.
  if (!Number.isInteger(n) || n < 3 || n > 16) throw new InvalidArgumentError('3 to 16 regions');
  return n;
}

const program = new Command('chaos')
  .description('Run the fault campaign against a mesh on this machine and check the relay\'s promises.')
  .option('--minutes <n>', 'how long the faults and the workload run', positive, 2)
  .option('--seed <n>', 'the seed of the fault schedule and the workload (printed when not given)', (v) => Math.floor(positive(v)))
  .option('--kinds <list>', `only these fault kinds, comma-separated (${FAULT_KINDS.map((k) => k.replace(/ /g, '-')).join(', ')}; with --regions: ${REGION_FAULT_KINDS.map((k) => k.replace(/ /g, '-')).join(', ')})`, kinds)
  .option('--regions <n>', 'a mesh of n regions (3 to 16) under region faults instead of one cluster', regionCount)
  .option('--nats-server <path>', 'the nats-server binary to run (default: the one installed)')
  .option('--out <dir>', 'where logs, stores and the report go (default .chaos/<time>-seed<seed>)')
  .parse();

const opts = program.opts<{ minutes: number; seed?: number; kinds?: string[]; out?: string; natsServer?: string; regions?: number }>();
const known: readonly string[] = opts.regions !== undefined ? REGION_FAULT_KINDS : FAULT_KINDS;
for (const k of opts.kinds ?? []) if (!known.includes(k)) program.error(`error: unknown fault kind "${k}"; known: ${known.join(', ')}`);
const natsServer = opts.natsServer ?? findNatsServer();
const natsVersion = execFileSync(natsServer, ['--version'], { encoding: 'utf8' }).trim();
const seed = opts.seed ?? freshSeed();
const startedAt = new Date().toISOString();
const outDir = resolve(opts.out ?? join(ROOT, '.chaos', `${startedAt.replace(/[:.]/g, '-')}-seed${seed}`));
mkdirSync(outDir, { recursive: true });
const say = (line: string): void => void process.stdout.write(`[chaos] ${line}\n`);
const command =
  `npm run chaos -- --minutes ${opts.minutes} --seed ${seed}` +
  (opts.regions !== undefined ? ` --regions ${opts.regions}` : '') +
  (opts.kinds !== undefined ? ` --kinds ${opts.kinds.map((k) => k.replace(/ /g, '-')).join(',')}` : '') +
  (opts.natsServer !== undefined ? ` --nats-server ${opts.natsServer}` : '');
say(`seed ${seed}; ${natsVersion}; output in ${outDir}`);

// Ctrl-C ends the run early; runCampaign's clean-up stops the processes, proxies and mounts it started.
const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130);
  interrupt.abort();
  say('interrupted: stopping what the campaign started (Ctrl-C again to leave at once)...');
});
// A stray socket error must not leave processes and mounts behind: said, and the run goes on.
process.on('uncaughtException', (e) => say(`uncaught: ${e.stack ?? e.message}`));

if (opts.regions !== undefined) {
  const regions = Array.from({ length: opts.regions }, (_, i) => String.fromCharCode(97 + i));
  await runRegionsFromCli({ seed, minutes: opts.minutes, outDir, regions, command, startedAt, natsVersion, signal: interrupt.signal, say, ...(opts.kinds !== undefined ? { kinds: opts.kinds as RegionFaultKind[] } : {}), ...(opts.natsServer !== undefined ? { natsServer: opts.natsServer } : {}) });
}

try {
  const result = await runCampaign({
    seed,
    minutes: opts.minutes,
    outDir,
    gateways: 2,
    ingresses: 2,
    channels: 3,
    // About 35 acknowledged POSTs a second through the faults of all kinds (70 with only relay
    // faults) on two loaded cores: the half-hour form checks more than 50,000.
    writersPerChannel: 4,
    readersPerChannel: 3,
    pace: [30, 100],
    evictEvery: [8000, 20_000],
    takeovers: 2,
    ...(opts.kinds !== undefined ? { kinds: opts.kinds as FaultKind[] } : {}),
    natsServer,
    signal: interrupt.signal,
    say,
  });
  const report = buildReport({ seed, minutes: opts.minutes, command, startedAt, outDir, natsVersion }, result);
  const file = writeReport(report, result);
  process.stdout.write(formatReport(report, file) + '\n');
  process.exit(report.anomalies.total === 0 ? 0 : 1);
} catch (e) {
  process.stderr.write(`chaos: the campaign could not run: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(2);
}
