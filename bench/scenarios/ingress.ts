// ingress: POSTs per second acknowledged by JetStream, single presence payloads and 16-entry
// batches, beside a bare fastify endpoint that parses the same JSON (the HTTP ceiling).

import { fileURLToPath } from 'node:url';
import { httpOk, waitUntil } from '../../tools/poll.js';
import { freePort } from '../../tools/ports.js';
import { Histogram, median } from '../lib/histogram.js';
import { LoadGen } from '../lib/loadgen-client.js';
import { BENCH_START, CpuMeter, startProc } from '../lib/procs.js';
import { fmt, table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startRelay } from '../systems/relay.js';

export const PRESENCE = JSON.stringify({
  type: 'presence',
  inventory: [
    { slot: 0, item: { id: 'minecraft:diamond_sword', count: 1, damage: 12, maxDamage: 1561, enchantments: [{ id: 'minecraft:sharpness', level: 5 }] } },
    { slot: 1, item: { id: 'minecraft:golden_apple', count: 16 } },
    { slot: 40, item: { id: 'minecraft:totem_of_undying', count: 1 } },
  ],
  attributes: { absorption: 4, health: 18.5, hunger: 20, oxygen: 300, saturation: 5.2 },
});
const BATCH16 = `[${Array.from({ length: 16 }, () => PRESENCE).join(',')}]`;
const CONNECTIONS = 64;

interface Measure {
  perSecond: number;
  p50: number;
  p99: number;
  ok: number;
  cpu: number;
  loadgenCpu: number;
}

export async function measure(loadgen: LoadGen, port: number, request: string, pids: number[], runs: number, measureMs: number): Promise<Measure> {
  const results: Measure[] = [];
  for (let r = 0; r < runs; r++) {
    const meter = new CpuMeter(pids);
    meter.begin();
    const res = await loadgen.send<{ requests: number; perSecond: number; statuses: Record<string, number>; hist: Array<[number, number]>; loadgenCpu: number }>({
      cmd: 'ingress',
      endpoint: { host: '127.0.0.1', port },
      request,
      connections: CONNECTIONS,
      warmupMs: 1000,
      measureMs,
    });
    const hist = Histogram.fromSparse(res.hist);
    const ok = (res.statuses['200'] ?? 0) / Math.max(1, res.requests);
    results.push({ perSecond: res.perSecond * ok, p50: hist.percentile(50), p99: hist.percentile(99), ok, cpu: meter.percent(), loadgenCpu: res.loadgenCpu });
  }
  const pick = (f: (m: Measure) => number): number => median(results.map(f));
  return { perSecond: pick((m) => m.perSecond), p50: pick((m) => m.p50), p99: pick((m) => m.p99), ok: pick((m) => m.ok), cpu: pick((m) => m.cpu), loadgenCpu: pick((m) => m.loadgenCpu) };
}

function raw(port: number, body: string, extra: string): string {
  return `POST / HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n` + body;
}

export async function ingressScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const runs = opts.quick ? 1 : 3;
  const measureMs = opts.quick ? 3000 : 8000;
  const loadgen = new LoadGen();
  const rows: Array<Array<string | number>> = [];
  const out: Record<string, Measure> = {};
  try {
    opts.log('ingress: relay');
    const relay = await startRelay();
    try {
      const pids = relay.pids();
      out['relay single'] = await measure(loadgen, relay.ingressPort, relay.ingressRequest(PRESENCE, 'bench-1.example.net'), pids, runs, measureMs);
      out['relay batch16'] = await measure(loadgen, relay.ingressPort, relay.ingressRequest(BATCH16, 'bench-1.example.net'), pids, runs, measureMs);
    } finally {
      await relay.stop();
    }
    opts.log('ingress: bare fastify');
    const port = await freePort();
    const bare = startProc('bare-fastify', process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../peers/bare-fastify.ts', import.meta.url))], { PORT: String(port) });
    try {
      await waitUntil(() => httpOk(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 'bare fastify', BENCH_START);
      out['bare single'] = await measure(loadgen, port, raw(port, PRESENCE, ''), [bare.pid], runs, measureMs);
      out['bare batch16'] = await measure(loadgen, port, raw(port, BATCH16, ''), [bare.pid], runs, measureMs);
    } finally {
      await bare.stop();
    }
  } finally {
    await loadgen.close();
  }
  for (const [name, m] of Object.entries(out)) {
    const entries = name.endsWith('batch16') ? 16 : 1;
    rows.push([name, m.perSecond, m.perSecond * entries, m.p50, m.p99, `${fmt(m.ok * 100)}%`, m.cpu, m.loadgenCpu]);
  }
  const targets: Target[] = [
    { name: 'ingress: relay single POST/s / bare fastify', value: out['relay single'].perSecond / out['bare single'].perSecond, bound: 0.5, kind: 'min', unit: 'x' },
  ];
  const text =
    `${CONNECTIONS} keep-alive connections, closed loop; relay answers after JetStream acknowledged every entry.\n\n` +
    table(['endpoint', 'requests/s', 'entries/s', 'p50 ms', 'p99 ms', '2xx', 'system CPU %', 'loadgen CPU %'], rows) +
    '\n';
  return { scenario: 'ingress', text, targets, data: out };
}
