// tracing: what OpenTelemetry costs the relay. The same relay (one ingress, one gateway) run three
// times side by side: tracing off, on at 1 % (parentbased_traceidratio 0.01), and on at 100 %, the
// spans exported as OTLP JSON to a receiver in this process that reads and discards them. Measured:
// POSTs/s acknowledged (closed loop) and delivery latency from POST send to frame read at a fixed rate.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoadGen } from '../lib/loadgen-client.js';
import { fmt, table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startRelay } from '../systems/relay.js';
import { measure, PRESENCE } from './ingress.js';
import { sweep, type RatePoint } from './fanout.js';

const MODES: Array<[string, Record<string, string> | null]> = [
  ['off', null],
  ['1 %', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }],
  ['100 %', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' }],
];
const DELIVERY_RATE = 20_000;

/** A stand-in tracing backend: takes every export, counts its spans, keeps nothing. */
async function startSink(): Promise<{ url: string; spans: () => number; close: () => Promise<void> }> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Span ids are the one field every span has exactly once.
      spans += Buffer.concat(chunks).toString('utf8').split('"spanId"').length - 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function tracingScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const runs = opts.quick ? 1 : 3;
  const measureMs = opts.quick ? 3000 : 5000;
  const sink = await startSink();
  const loadgen = new LoadGen();
  const data: Record<string, { posts: Awaited<ReturnType<typeof measure>>; delivery: RatePoint | undefined; spans: number }> = {};
  try {
    for (const [mode, env] of MODES) {
      opts.log(`tracing: ${mode}`);
      const relay = await startRelay({ env: env === null ? {} : { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } });
      const before = sink.spans();
      try {
        const posts = await measure(loadgen, relay.ingressPort, relay.ingressRequest(PRESENCE, 'bench-1.example.net'), relay.pids(), runs, measureMs);
        const [delivery] = await sweep(relay, { streams: 1000, channels: 4, rates: [DELIVERY_RATE] }, { ...opts, runs, measureMs, warmupMs: 1000 });
        data[mode] = { posts, delivery, spans: 0 };
      } finally {
        await relay.stop();
      }
      // Stopping flushed what the services still held.
      data[mode].spans = sink.spans() - before;
    }
  } finally {
    await loadgen.close();
    await sink.close();
  }
  const off = data['off']!;
  const rows = MODES.map(([mode]) => {
    const d = data[mode]!;
    return [mode, d.posts.perSecond, `${fmt((d.posts.perSecond / off.posts.perSecond - 1) * 100)}%`, d.posts.p99, d.delivery?.delivered ?? NaN, d.delivery?.p50 ?? NaN, d.delivery?.p99 ?? NaN, d.posts.cpu, d.spans];
  });
  const ratio = (mode: string): number => data[mode]!.posts.perSecond / off.posts.perSecond;
  const targets: Target[] = [
    { name: 'tracing at 1 %: POSTs/s / tracing off', value: ratio('1 %'), bound: 0.9, kind: 'min', unit: 'x' },
    { name: 'tracing at 100 %: POSTs/s / tracing off', value: ratio('100 %'), bound: 0.5, kind: 'min', unit: 'x' },
  ];
  const text =
    `One ingress and one gateway. POSTs: single presence payloads, 64 keep-alive connections, closed loop. Delivery: 1,000 streams over 4 channels at ${fmt(DELIVERY_RATE)} deliveries/s, latency from POST send to frame read. Spans exported as OTLP JSON to a local receiver.\n\n` +
    table(['tracing', 'POSTs/s', 'vs off', 'POST p99 ms', 'delivered/s', 'delivery p50 ms', 'delivery p99 ms', 'CPU % (POSTs)', 'spans exported'], rows) +
    '\n';
  return { scenario: 'tracing', text, targets, data };
}
