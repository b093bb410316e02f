// slow-consumer: 1,000 streams; one client stops reading; the others' p99 with and without it.

import { Histogram, median } from '../lib/histogram.js';
import { LoadGen } from '../lib/loadgen-client.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startRelay } from '../systems/relay.js';
import { channelNames } from '../systems/system.js';

const RATE = 50_000;

export async function slowConsumerScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const runs = opts.quick ? 1 : 3;
  const measureMs = opts.quick ? 3000 : 5000;
  const relay = await startRelay();
  const loadgen = new LoadGen();
  try {
    const channels = channelNames(4);
    await loadgen.send({ cmd: 'open', spec: relay.streamSpec(1000, channels, 200) });
    const run = async (): Promise<{ p50: number; p99: number; delivered: number }> => {
      const p50s: number[] = [];
      const p99s: number[] = [];
      const delivered: number[] = [];
      for (let r = 0; r < runs; r++) {
        const res = await loadgen.send<{ hist: Array<[number, number]>; delivered: number; seconds: number }>({
          cmd: 'fanout',
          publish: relay.publishSpec(channels, RATE / 250, 32),
          warmupMs: 1000,
          measureMs,
        });
        const h = Histogram.fromSparse(res.hist);
        p50s.push(h.percentile(50));
        p99s.push(h.percentile(99));
        delivered.push(res.delivered / res.seconds);
      }
      return { p50: median(p50s), p99: median(p99s), delivered: median(delivered) };
    };
    opts.log('slow-consumer: every client reading');
    const all = await run();
    await loadgen.send({ cmd: 'pause', index: 0 });
    opts.log('slow-consumer: one client stopped reading');
    const stalled = await run();
    const targets: Target[] = [{ name: "slow consumer: rise of the others' p99", value: stalled.p99 - all.p99, bound: 5, kind: 'max', unit: ' ms' }];
    const text =
      `1,000 streams over 4 channels, ${RATE.toLocaleString('en-US')} deliveries/s offered.\n\n` +
      table(
        ['condition', 'delivered/s', 'p50 ms', 'p99 ms'],
        [
          ['all reading', all.delivered, all.p50, all.p99],
          ['one stalled', stalled.delivered, stalled.p50, stalled.p99],
        ],
      ) +
      '\n';
    return { scenario: 'slow-consumer', text, targets, data: { all, stalled } };
  } finally {
    await loadgen.close();
    await relay.stop();
  }
}
