// memory: RSS per idle authenticated stream, relay gateway against the baseline broadcaster.

import { LoadGen } from '../lib/loadgen-client.js';
import { rssBytes } from '../lib/procs.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startBaseline } from '../systems/baseline.js';
import { startRelay } from '../systems/relay.js';
import { channelNames, type System } from '../systems/system.js';

const SETTLE_MS = 3000;

async function perStream(system: System, counts: number[], log: (l: string) => void): Promise<Record<number, number>> {
  const loadgen = new LoadGen();
  const out: Record<number, number> = {};
  try {
    // Warm the process up (JIT, buffers) with a few streams before the baseline reading.
    await loadgen.send({ cmd: 'open', spec: system.streamSpec(50, channelNames(10), 50) });
    await loadgen.send({ cmd: 'dropAll' });
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const before = rssBytes(system.streamPid());
    let open = 0;
    for (const n of counts) {
      const spec = { ...system.streamSpec(n - open, channelNames(10), 200), offset: 1000 + open };
      await loadgen.send({ cmd: 'open', spec });
      open = n;
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      out[n] = (rssBytes(system.streamPid()) - before) / n;
      log(`  ${system.name}: ${n} idle streams, ${(out[n] / 1024).toFixed(1)} KiB each`);
    }
  } finally {
    await loadgen.close();
  }
  return out;
}

export async function memoryScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const counts = opts.quick ? [2000] : [5000, 10_000];
  opts.log('memory: relay gateway');
  const relay = await startRelay();
  let relayPer: Record<number, number>;
  try {
    relayPer = await perStream(relay, counts, opts.log);
  } finally {
    await relay.stop();
  }
  opts.log('memory: baseline');
  const baseline = await startBaseline();
  let basePer: Record<number, number>;
  try {
    basePer = await perStream(baseline, counts, opts.log);
  } finally {
    await baseline.stop();
  }
  const rows = counts.map((n) => [n, relayPer[n]! / 1024, basePer[n]! / 1024, relayPer[n]! / basePer[n]!]);
  const top = counts[counts.length - 1]!;
  const targets: Target[] = [
    { name: `memory: relay KB per idle stream at ${top}`, value: relayPer[top]! / 1000, bound: 12, kind: 'max', unit: ' KB' },
    { name: `memory: relay / baseline per stream at ${top}`, value: relayPer[top]! / basePer[top]!, bound: 1.2, kind: 'max', unit: 'x' },
  ];
  const text =
    'RSS growth of the process holding the connections divided by the streams open, read 3 s after opening.\n\n' +
    table(['streams', 'relay KiB/stream', 'baseline KiB/stream', 'ratio'], rows) +
    '\n';
  return { scenario: 'memory', text, targets, data: { relay: relayPer, baseline: basePer } };
}
