// eviction: time from the second stream's open (same account, same channel, other gateway) to the
// first stream's close.

import { Histogram } from '../lib/histogram.js';
import { LoadGen } from '../lib/loadgen-client.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startRelay } from '../systems/relay.js';

export async function evictionScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const trials = opts.quick ? 40 : 300;
  const relay = await startRelay({ gateways: 2 });
  const loadgen = new LoadGen();
  try {
    opts.log(`eviction: ${trials} trials across two gateways`);
    const channels = ['bench-evict.example.net'];
    const res = await loadgen.send<{ hist: Array<[number, number]>; failures: number }>({
      cmd: 'evict',
      first: relay.streamSpecOn(0, 1, channels, 1),
      second: relay.streamSpecOn(1, 1, channels, 1),
      trials,
    });
    const h = Histogram.fromSparse(res.hist);
    const targets: Target[] = [{ name: 'eviction p99 across gateways', value: res.failures > 0 ? Infinity : h.percentile(99), bound: 250, kind: 'max', unit: ' ms' }];
    const text = table(['trials', 'failures', 'p50 ms', 'p99 ms', 'max ms'], [[trials, res.failures, h.percentile(50), h.percentile(99), h.max]]) + '\n';
    return { scenario: 'eviction', text, targets, data: { trials, failures: res.failures, p50: h.percentile(50), p99: h.percentile(99) } };
  } finally {
    await loadgen.close();
    await relay.stop();
  }
}
