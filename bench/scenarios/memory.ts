// memory: memory per idle authenticated stream, relay gateway against the baseline broadcaster.
// RSS is what the target speaks of; the JS heap in use is reported beside it, since RSS also holds
// heap capacity V8 grew while the streams were being opened and has not given back.

import { readFileSync } from 'node:fs';
import { pollUntil } from '../../tools/poll.js';
import { LoadGen } from '../lib/loadgen-client.js';
import { rssBytes } from '../lib/procs.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startBaseline } from '../systems/baseline.js';
import { startRelay } from '../systems/relay.js';
import { channelNames, type System } from '../systems/system.js';

interface Reading {
  rss: number;
  heapUsed: number;
}

/**
 * Memory once it has settled: the process is asked to collect garbage (left from opening the
 * streams), then RSS is read every second until three readings agree within 1 %.
 */
async function settled(system: System): Promise<Reading> {
  const pid = system.streamPid();
  process.kill(pid, 'SIGUSR2');
  const readings: number[] = [];
  // The first reading comes a second after the signal, when the collection has had its chance; a
  // process that never settles is read as it is after 30 s.
  await new Promise((r) => setTimeout(r, 1000));
  await pollUntil(
    () => {
      readings.push(rssBytes(pid));
      const last = readings.slice(-3);
      return last.length === 3 && (Math.max(...last) - Math.min(...last)) / Math.max(...last) < 0.01;
    },
    { timeoutMs: 30_000, intervalMs: 1000 },
  );
  const usage = system.memoryFile ? (JSON.parse(readFileSync(system.memoryFile, 'utf8')) as { heapUsed: number }) : { heapUsed: NaN };
  return { rss: readings[readings.length - 1]!, heapUsed: usage.heapUsed };
}

async function perStream(system: System, counts: number[], log: (l: string) => void): Promise<Record<number, Reading>> {
  const loadgen = new LoadGen();
  const out: Record<number, Reading> = {};
  try {
    // Warm the process up (JIT, buffers) with a few streams before the first reading.
    await loadgen.send({ cmd: 'open', spec: system.streamSpec(50, channelNames(10), 50) });
    await loadgen.send({ cmd: 'dropAll' });
    const before = await settled(system);
    let open = 0;
    for (const n of counts) {
      const spec = { ...system.streamSpec(n - open, channelNames(10), 200), offset: 1000 + open };
      await loadgen.send({ cmd: 'open', spec });
      open = n;
      const now = await settled(system);
      out[n] = { rss: (now.rss - before.rss) / n, heapUsed: (now.heapUsed - before.heapUsed) / n };
      log(`  ${system.name}: ${n} idle streams, RSS ${(out[n].rss / 1024).toFixed(1)} KiB, heap ${(out[n].heapUsed / 1024).toFixed(1)} KiB each`);
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
  let relayPer: Record<number, Reading>;
  try {
    relayPer = await perStream(relay, counts, opts.log);
  } finally {
    await relay.stop();
  }
  opts.log('memory: baseline');
  const baseline = await startBaseline();
  let basePer: Record<number, Reading>;
  try {
    basePer = await perStream(baseline, counts, opts.log);
  } finally {
    await baseline.stop();
  }
  const kib = (b: number): number => b / 1024;
  const rows = counts.map((n) => [n, kib(relayPer[n]!.rss), kib(basePer[n]!.rss), relayPer[n]!.rss / basePer[n]!.rss, kib(relayPer[n]!.heapUsed), kib(basePer[n]!.heapUsed), relayPer[n]!.heapUsed / basePer[n]!.heapUsed]);
  const top = counts[counts.length - 1]!;
  const targets: Target[] = [
    { name: `memory: relay KB (RSS) per idle stream at ${top}`, value: relayPer[top]!.rss / 1000, bound: 12, kind: 'max', unit: ' KB' },
    { name: `memory: relay / baseline RSS per stream at ${top}`, value: relayPer[top]!.rss / basePer[top]!.rss, bound: 1.2, kind: 'max', unit: 'x' },
  ];
  const text =
    'Growth of the stream-holding process divided by the streams open, after a forced GC, once RSS has settled (three readings a second apart within 1 %); both run with MALLOC_ARENA_MAX=2. Each relay stream is a distinct account.\n\n' +
    table(['streams', 'relay RSS KiB', 'baseline RSS KiB', 'RSS ratio', 'relay heap KiB', 'baseline heap KiB', 'heap ratio'], rows) +
    '\n';
  return { scenario: 'memory', text, targets, data: { relay: relayPer, baseline: basePer } };
}
