// The scale scenario's first opens alone (100,002 streams on six gateways, 200 in flight per
// generator), about a minute and a half: for comparing a change to the open path run after run,
// alternated with a worktree of the commit before it. Arguments KEY=VALUE are the relay's
// environment (MAX_STREAMS_PER_ACCOUNT=0 MAX_STREAMS_PER_KEY=0: no census); --cluster runs it on
// three replicated nats-servers.
//   npx tsx bench/tools/first-opens.ts [--cluster] [KEY=VALUE ...]
import { LoadGen } from '../lib/loadgen-client.js';
import { CpuMeter } from '../lib/procs.js';
import { startRelay } from '../systems/relay.js';
import { channelPlan, openAll, PER_PROCESS } from '../scenarios/scale-plan.js';

const args = process.argv.slice(2);
const cluster = args.includes('--cluster');
const env = Object.fromEntries(args.filter((a) => a.includes('=')).map((a): [string, string] => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
const total = 100_000;
const groups = Math.ceil(total / PER_PROCESS);
const per = Math.ceil(total / groups);
const plan = channelPlan(groups * per);
const relay = await startRelay({ gateways: groups, env, cluster });
const loadgens = Array.from({ length: groups }, () => new LoadGen());
try {
  const meter = new CpuMeter(relay.pids());
  meter.begin();
  const r = await openAll(relay, loadgens, plan, per, 200, 0);
  const cpu = meter.percent();
  console.log(JSON.stringify({ cluster, env, opened: r.opened, failed: r.failed, perSec: Math.round((r.opened / r.ms) * 1000), s: (r.ms / 1000).toFixed(1), cpu: cpu.toFixed(0) }));
} finally {
  await Promise.all(loadgens.map((lg) => lg.close()));
  await relay.stop();
}
