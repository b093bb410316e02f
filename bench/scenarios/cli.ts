// cli: how long the operator's `relay` takes to answer, each command timed as a process (start to
// exit, as a shell or a script sees it), against a local nats-server holding a few keys and bans.
// Two ways to run it: from dist/ (as the image does; built first so it is current) and from the
// checkout (bin/relay.js), after one warm run. BENCH_CLI_ROOT=<another checkout, with dist/ built>
// times that tree instead, with this harness: the "before" of a change.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startNatsNode } from '../../tools/nats-launcher.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';

const COMMANDS: Array<{ args: string[]; bound: number }> = [
  { args: ['--help'], bound: 0.3 },
  { args: ['bans', 'list', '--json'], bound: 1 },
  { args: ['keys', 'list', '--json'], bound: 1 },
  { args: ['streams', '--json'], bound: 1 },
  { args: ['stats', '--json'], bound: 1 },
  { args: ['audit', '--json'], bound: 1 },
];

function run(entry: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  return new Promise((done, fail) => {
    execFile(process.execPath, [entry, ...args], { env, maxBuffer: 64 << 20 }, (err, _out, stderr) => {
      if (err !== null) fail(new Error(`relay ${args.join(' ')}: ${err.message}\n${stderr}`));
      else done((performance.now() - t0) / 1000);
    });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function cliScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const runs = opts.quick ? 3 : 10;
  const root = resolve(process.env['BENCH_CLI_ROOT'] ?? '.');
  const store = mkdtempSync(join(tmpdir(), 'bench-cli-'));
  opts.log(`cli: building dist/ in ${root}`);
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  const nats = await startNatsNode({ storeDir: store });
  const env = { ...process.env, NATS_URL: nats.url, LOG_LEVEL: 'warn', RELAY_ACTOR: 'bench' };
  const entries = { dist: join(root, 'dist', 'services', 'cli', 'main.js'), checkout: join(root, 'bin', 'relay.js') };
  try {
    await run(entries.dist, ['setup'], env);
    // Something to list: ten keys and ten bans, each with its audit record.
    for (let i = 0; i < 10; i++) {
      await run(entries.dist, ['keys', 'create', '--scopes', 'irc.connection.establish', '--label', `bench ${i}`], env);
      await run(entries.dist, ['bans', 'add', `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, '--reason', 'bench'], env);
    }
    const rows: Array<Array<string | number>> = [];
    const targets: Target[] = [];
    const data: Record<string, Record<string, number[]>> = {};
    for (const [way, entry] of Object.entries(entries)) {
      // The warm run: a checkout compiles its sources once, then runs what it compiled.
      await run(entry, ['--help'], env);
      data[way] = {};
      for (const c of COMMANDS) {
        const times: number[] = [];
        // Interleaved with nothing else: one command's runs back to back, as a script's loop makes them.
        for (let i = 0; i < runs; i++) times.push(await run(entry, c.args, env));
        const sorted = [...times].sort((a, b) => a - b);
        const name = `relay ${c.args.join(' ')}`;
        data[way][name] = times;
        rows.push([way, name, percentile(sorted, 50), percentile(sorted, 90), sorted.at(-1)!]);
        targets.push({ name: `${name}, ${way}, median`, value: percentile(sorted, 50), bound: c.bound, kind: 'max', unit: ' s' });
      }
    }
    const text = `${table(['from', 'command', 'median s', 'p90 s', 'max s'], rows)}\n\n${runs} runs of each, ${root === resolve('.') ? 'this checkout' : root}.\n`;
    return { scenario: 'cli', text, targets, data: { root, runs, times: data } };
  } finally {
    await nats.stop();
    rmSync(store, { recursive: true, force: true });
  }
}
