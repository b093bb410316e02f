// fanout: authenticated streams spread over channels, a sweep of publish rates; deliveries/s and
// p50/p99 from POST send to frame read, for the relay (ingress, JetStream, gateway) and both peers.

import { Histogram, median, spread } from '../lib/histogram.js';
import { LoadGen } from '../lib/loadgen-client.js';
import { CpuMeter } from '../lib/procs.js';
import { fmt, table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startBaseline } from '../systems/baseline.js';
import { startPushpin } from '../systems/pushpin.js';
import { startRelay } from '../systems/relay.js';
import { channelNames, type System } from '../systems/system.js';

export interface RatePoint {
  offered: number;
  delivered: number;
  p50: number;
  p99: number;
  spread: number;
  systemCpu: number;
  loadgenCpu: number;
  errors: number;
}

interface Layout {
  streams: number;
  channels: number;
  rates: number[];
}

const P99_BOUND = 30;

type Starter = () => Promise<System>;
const ALL_SYSTEMS: Array<[string, Starter]> = [
  ['relay', () => startRelay()],
  ['baseline', startBaseline],
  ['pushpin', startPushpin],
];
// BENCH_SYSTEMS=relay,baseline narrows a run while working on one of them.
const only = process.env['BENCH_SYSTEMS']?.split(',');
const SYSTEMS = ALL_SYSTEMS.filter(([n]) => only === undefined || only.includes(n));

/** Runs one system through the sweep; stops once it is clearly saturated. */
export async function sweep(system: System, layout: Layout, opts: ScenarioOptions & { runs: number; measureMs: number; warmupMs: number }): Promise<RatePoint[]> {
  const loadgen = new LoadGen();
  const points: RatePoint[] = [];
  try {
    const channels = channelNames(layout.channels);
    const opened = await loadgen.send<{ opened: number; failed: number; ms: number }>({
      cmd: 'open',
      spec: system.streamSpec(layout.streams, channels, 200),
    });
    // A handful of refused opens (Pushpin under a burst of 200 at once) does not change the result;
    // more than 1 % would, and stops the run.
    if (opened.opened < 0.99 * layout.streams) throw new Error(`${system.name}: only ${opened.opened} of ${layout.streams} streams opened`);
    if (opened.opened < layout.streams) opts.log(`  ${system.name}: ${opened.opened} of ${layout.streams} streams opened; measuring with those`);
    const perChannel = layout.streams / layout.channels;
    for (const rate of layout.rates) {
      const runs: Array<{ delivered: number; hist: Histogram; cpu: number; loadgenCpu: number; errors: number }> = [];
      for (let r = 0; r < opts.runs; r++) {
        const meter = new CpuMeter(system.pids());
        meter.begin();
        const res = await loadgen.send<{ delivered: number; seconds: number; hist: Array<[number, number]>; loadgenCpu: number; errors: number }>({
          cmd: 'fanout',
          publish: system.publishSpec(channels, rate / perChannel, 32),
          warmupMs: opts.warmupMs,
          measureMs: opts.measureMs,
        });
        runs.push({ delivered: res.delivered / res.seconds, hist: Histogram.fromSparse(res.hist), cpu: meter.percent(), loadgenCpu: res.loadgenCpu, errors: res.errors });
      }
      const point: RatePoint = {
        offered: rate,
        delivered: median(runs.map((r) => r.delivered)),
        p50: median(runs.map((r) => r.hist.percentile(50))),
        p99: median(runs.map((r) => r.hist.percentile(99))),
        spread: spread(runs.map((r) => r.hist.percentile(99))),
        systemCpu: median(runs.map((r) => r.cpu)),
        loadgenCpu: median(runs.map((r) => r.loadgenCpu)),
        errors: Math.max(...runs.map((r) => r.errors)),
      };
      points.push(point);
      opts.log(
        `  ${system.name} ${layout.streams} streams @ ${fmt(rate)}/s: delivered ${fmt(point.delivered)}/s p50 ${fmt(point.p50)} ms p99 ${fmt(point.p99)} ms (cpu ${fmt(point.systemCpu)}%, loadgen ${fmt(point.loadgenCpu)}%)`,
      );
      if (point.p99 > 4 * P99_BOUND || point.delivered < 0.8 * rate) break;
    }
  } finally {
    await loadgen.close();
  }
  return points;
}

/** Highest delivery rate sustained (>= 95 % of offered) with p99 within the bound. */
export function capacity(points: RatePoint[], bound = P99_BOUND): number {
  return Math.max(0, ...points.filter((p) => p.p99 <= bound && p.delivered >= 0.95 * p.offered).map((p) => p.delivered));
}

export async function fanoutScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const layouts: Layout[] = opts.quick
    ? [{ streams: 1000, channels: 4, rates: [10_000, 20_000, 50_000, 100_000, 200_000] }]
    : [
        { streams: 1000, channels: 4, rates: [5_000, 10_000, 20_000, 50_000, 100_000, 150_000, 200_000, 300_000, 400_000] },
        { streams: 10_000, channels: 10, rates: [20_000, 50_000, 100_000, 150_000] },
      ];
  const runOpts = { ...opts, runs: opts.quick ? 1 : 3, measureMs: opts.quick ? 2000 : 5000, warmupMs: opts.quick ? 1000 : 2000 };
  const results: Record<string, Record<string, RatePoint[]>> = {};
  let text = '';
  for (const layout of layouts) {
    const key = `${layout.streams}`;
    results[key] = {};
    for (const [name, start] of SYSTEMS) {
      opts.log(`fanout: ${name}, ${layout.streams} streams over ${layout.channels} channels`);
      const system = await start();
      try {
        results[key][name] = await sweep(system, layout, runOpts);
      } finally {
        await system.stop();
      }
    }
    const rows: Array<Array<string | number>> = [];
    for (const [name] of SYSTEMS) {
      for (const p of results[key][name] ?? []) {
        rows.push([name, p.offered, p.delivered, p.p50, p.p99, `${fmt(p.spread * 100)}%`, p.systemCpu, p.loadgenCpu]);
      }
    }
    text += `### ${layout.streams.toLocaleString('en-US')} streams over ${layout.channels} channels\n\n`;
    text += table(['system', 'offered/s', 'delivered/s', 'p50 ms', 'p99 ms', 'p99 spread', 'system CPU %', 'loadgen CPU %'], rows) + '\n\n';
  }

  const targets: Target[] = [];
  const k1 = results['1000']!;
  const cap = (n: string): number => capacity(k1[n] ?? []);
  targets.push({ name: 'fanout 1k: relay capacity (p99<=30ms) / baseline', value: cap('relay') / cap('baseline'), bound: 0.7, kind: 'min', unit: 'x' });
  targets.push({ name: 'fanout 1k: relay capacity (p99<=30ms) / pushpin', value: cap('relay') / cap('pushpin'), bound: 4, kind: 'min', unit: 'x' });
  const at20k = (k1['relay'] ?? []).find((p) => p.offered === 20_000);
  targets.push({ name: 'relay end-to-end p50 at 20k deliveries/s', value: at20k?.p50 ?? NaN, bound: 5, kind: 'max', unit: ' ms' });
  targets.push({ name: 'relay end-to-end p99 at 20k deliveries/s', value: at20k?.p99 ?? NaN, bound: 25, kind: 'max', unit: ' ms' });
  const k10 = results['10000'];
  if (k10 !== undefined) {
    // p99 at the highest rate both sustained.
    const both = (k10['relay'] ?? []).filter((p) => (k10['baseline'] ?? []).some((b) => b.offered === p.offered && b.delivered >= 0.95 * b.offered) && p.delivered >= 0.95 * p.offered);
    const rate = Math.max(0, ...both.map((p) => p.offered));
    const relayP99 = k10['relay']?.find((p) => p.offered === rate)?.p99 ?? NaN;
    const baseP99 = k10['baseline']?.find((p) => p.offered === rate)?.p99 ?? NaN;
    targets.push({ name: `fanout 10k: relay p99 / baseline p99 at ${fmt(rate)}/s`, value: relayP99 / baseP99, bound: 1.3, kind: 'max', unit: 'x' });
  }
  text += `Capacity (highest delivery rate with p99 <= ${P99_BOUND} ms), 1,000 streams: relay ${fmt(cap('relay'))}/s, baseline ${fmt(cap('baseline'))}/s, pushpin ${fmt(cap('pushpin'))}/s.\n`;
  return { scenario: 'fanout', text, targets, data: results };
}
