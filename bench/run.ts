// npm run bench -- <scenario|all> [--quick] [--cluster] [--million] [--json FILE]
// Starts every system itself, runs the scenario(s) side by side, prints tables and target checks.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { met, targetTable, type ScenarioOptions, type ScenarioResult } from './lib/report.js';
import { cliScenario } from './scenarios/cli.js';
import { connectScenario } from './scenarios/connect.js';
import { evictionScenario } from './scenarios/eviction.js';
import { fanoutScenario } from './scenarios/fanout.js';
import { ingressScenario } from './scenarios/ingress.js';
import { memoryScenario } from './scenarios/memory.js';
import { regionsScenario } from './scenarios/regions.js';
import { resumeScenario } from './scenarios/resume.js';
import { scaleScenario } from './scenarios/scale.js';
import { slowConsumerScenario } from './scenarios/slow-consumer.js';
import { tracingScenario } from './scenarios/tracing.js';

const SCENARIOS: Record<string, (o: ScenarioOptions) => Promise<ScenarioResult>> = {
  fanout: fanoutScenario,
  ingress: ingressScenario,
  connect: connectScenario,
  memory: memoryScenario,
  eviction: evictionScenario,
  'slow-consumer': slowConsumerScenario,
  resume: resumeScenario,
  regions: regionsScenario,
  scale: scaleScenario,
  tracing: tracingScenario,
  cli: cliScenario,
};
/** Run only when named: 100,000 streams take the machine for minutes, and `all` stays comparable to earlier runs (cli times the operator's command, not the relay; regions runs a super-cluster). */
const NAMED_ONLY = new Set(['scale', 'resume', 'cli', 'regions']);

function usage(): never {
  process.stderr.write(`usage: npm run bench -- <${[...Object.keys(SCENARIOS), 'all'].join('|')}> [--quick] [--cluster] [--million] [--json FILE]\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const cluster = args.includes('--cluster');
const million = args.includes('--million');
const jsonAt = args.indexOf('--json');
const jsonFile = jsonAt === -1 ? null : args[jsonAt + 1];
if (jsonAt !== -1 && (jsonFile === undefined || jsonFile === null)) usage();
const name = args.find((a, i) => !a.startsWith('--') && (jsonAt === -1 || i !== jsonAt + 1));
if (name === undefined || (name !== 'all' && !(name in SCENARIOS))) usage();
// Only the scale scenario has a cluster variant and a simulated million; the others compare one relay node with its peers.
if ((cluster || million) && name !== 'scale') usage();

const selected = name === 'all' ? Object.keys(SCENARIOS).filter((s) => !NAMED_ONLY.has(s)) : [name];
const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
const log = (line: string): void => void process.stderr.write(line + '\n');
const results: ScenarioResult[] = [];
const started = Date.now();
for (const s of selected) {
  log(`== ${s}${quick ? ' (quick)' : ''}${cluster ? ' (three-node cluster)' : ''}${million ? ' (simulated million)' : ''}`);
  const t0 = Date.now();
  const result = await SCENARIOS[s]!({ quick, cluster, million, log });
  results.push(result);
  process.stdout.write(`\n## ${s}\n\n${result.text}\n${targetTable(result.targets)}\n\n(${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
}
const allTargets = results.flatMap((r) => r.targets);
process.stdout.write(`\n${allTargets.filter(met).length} of ${allTargets.length} targets met in ${((Date.now() - started) / 1000).toFixed(0)} s.\n`);
if (jsonFile !== null && jsonFile !== undefined) {
  mkdirSync(dirname(jsonFile), { recursive: true });
  writeFileSync(
    jsonFile,
    JSON.stringify({ date: new Date().toISOString(), quick, cluster, million, machine, results: results.map((r) => ({ scenario: r.scenario, targets: r.targets.map((t) => ({ ...t, met: met(t) })), data: r.data })) }, null, 2) + '\n',
  );
}
