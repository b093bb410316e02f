// connect: authenticated stream opens per second (profile API look-up, key check, ownership claim in
// KV, subscription), and a reconnect storm: every stream dropped at once and reopened.

import { LoadGen } from '../lib/loadgen-client.js';
import { CpuMeter } from '../lib/procs.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startRelay } from '../systems/relay.js';
import { channelNames } from '../systems/system.js';

export async function connectScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const n = opts.quick ? 3000 : 10_000;
  const relay = await startRelay();
  const loadgen = new LoadGen();
  try {
    const channels = channelNames(10);
    const meter = new CpuMeter(relay.pids());
    meter.begin();
    opts.log(`connect: opening ${n} authenticated streams`);
    const first = await loadgen.send<{ opened: number; failed: number; ms: number }>({ cmd: 'open', spec: relay.streamSpec(n, channels, 200) });
    const openCpu = meter.percent();
    opts.log(`connect: dropping all ${n} and reopening (storm)`);
    await loadgen.send({ cmd: 'dropAll' });
    meter.begin();
    const storm = await loadgen.send<{ opened: number; failed: number; ms: number }>({ cmd: 'open', spec: relay.streamSpec(n, channels, 500) });
    const stormCpu = meter.percent();
    const rows = [
      ['first open', n, first.opened, first.failed, (first.opened / first.ms) * 1000, first.ms / 1000, openCpu],
      ['storm reopen', n, storm.opened, storm.failed, (storm.opened / storm.ms) * 1000, storm.ms / 1000, stormCpu],
    ];
    const targets: Target[] = [
      { name: 'connect: authenticated opens/s', value: (first.opened / first.ms) * 1000, bound: 2000, kind: 'min', unit: '/s' },
      { name: `connect: ${n.toLocaleString('en-US')} streams back after a storm`, value: storm.failed === 0 ? storm.ms / 1000 : Infinity, bound: 10, kind: 'max', unit: ' s' },
    ];
    const text =
      'Each stream is a distinct account (one profile API call each on first open), 200 opens in flight (500 in the storm).\n\n' +
      table(['phase', 'streams', 'opened', 'failed', 'opens/s', 'seconds', 'relay CPU %'], rows) +
      '\n';
    return { scenario: 'connect', text, targets, data: { first, storm } };
  } finally {
    await loadgen.close();
    await relay.stop();
  }
}
