// regions: three regions on loopback (tools/nats-super-cluster.ts, one nats-server each, every link
// through a proxy that can slow or cut it), an ingress and a gateway in regions a and b (region c
// holds the third vote of JetStream's meta group). Side by side in one run: with the links passing
// and with DELAY_MS added each way, a payload posted in a is timed from the POST to its
// acknowledgement, to a stream in a (same region) and to a stream in b (across); then b is cut off,
// payloads are posted in a meanwhile, and the time from the links' return until b's stream has them
// all is the catch-up. With the links slowed, an account's stream in a is evicted by its open in b:
// timed from the second open's request to the first stream's `evicted`. And an account opened in b
// before the cut and in a during it: the time from the links' return until b's older stream is
// evicted. The relay's services run in this process (their event loop is the bench's).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Histogram } from '../lib/histogram.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { startRelayServer, type RelayServer } from '../../services/server.js';
import { startSuperCluster, type SuperCluster } from '../../tools/nats-super-cluster.js';
import { runCli } from '../../test/helpers/cli.js';

const REGIONS = ['a', 'b', 'c'] as const;
const MESH = { REGIONS: REGIONS.join(','), REGION_HOME: 'a' };
const CHANNEL = 'bench-regions.example.net';
const DELAY_MS = 50;

/** An SSE stream that records when each payload (`{message: "<n>"}`) arrives. */
class Listener {
  readonly arrived = new Map<string, number>();
  /** When the stream was told it was evicted. */
  evictedAt: number | null = null;
  private readonly abort = new AbortController();
  private waiters: Array<() => void> = [];
  readonly ready: Promise<void>;

  constructor(url: string, headers: Record<string, string>) {
    this.ready = this.read(url, headers);
  }

  private async read(url: string, headers: Record<string, string>): Promise<void> {
    const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: this.abort.signal });
    if (res.status !== 200 || res.body === null) throw new Error(`stream answered ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let rest = '';
    let opened!: () => void;
    const ready = new Promise<void>((r) => (opened = r));
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done === true || value === undefined) return;
        const lines = (rest + value).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          if (line.startsWith('event: ready')) opened();
          if (/^: ?evicted/.test(line)) this.evictedAt = performance.now();
          const m = /^data: \{"type":"chat","message":"(\d+)"\}$/.exec(line);
          if (m !== null) this.arrived.set(m[1]!, performance.now());
        }
        for (const w of this.waiters.splice(0)) w();
      }
    })();
    await ready;
  }

  async until(check: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!check()) {
      if (performance.now() > deadline) throw new Error('the stream did not get every payload in time');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200).unref();
      });
    }
  }

  close(): void {
    this.abort.abort();
  }
}

interface Phase {
  ack: Histogram;
  same: Histogram;
  across: Histogram;
}

export async function regionsScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const payloads = opts.quick ? 100 : 300;
  const cutMs = opts.quick ? 10_000 : 60_000;
  const dir = mkdtempSync(join(tmpdir(), 'bench-regions-'));
  const sc: SuperCluster = await startSuperCluster(dir, REGIONS);
  const services: RelayServer[] = [];
  const listeners: Listener[] = [];
  try {
    const setup = await runCli(['setup'], { ...MESH, NATS_URL: sc.region('c').url }, 120_000);
    if (setup.code !== 0) throw new Error(`relay setup: ${setup.stderr}`);
    const start = (kind: 'ingress' | 'gateway', r: string): Promise<RelayServer> =>
      startRelayServer({
        service: kind,
        env: { ...MESH, REGION: r, NATS_URL: sc.region(r).url, PROFILE_API_URL: 'offline', NODE_ENV: 'development', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'silent', RELAY_NODE_ID: `${kind}-${r}` },
      });
    for (const r of ['a', 'b']) for (const kind of ['ingress', 'gateway'] as const) services.push(await start(kind, r));
    const [ingressA, gatewayA, , gatewayB] = services as [RelayServer, RelayServer, RelayServer, RelayServer];
    const key = await ingressA.core.keys.create({ scopes: ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated') });
    const as = (name: string): Record<string, string> => ({ authorization: `Bearer offline:${name}`, 'client-id': key.clientId, 'client-secret': key.clientSecret, 'x-irc-multiplayer-server': CHANNEL });
    const inA = new Listener(gatewayA.url, as('ListenerA'));
    const inB = new Listener(gatewayB.url, as('ListenerB'));
    listeners.push(inA, inB);
    await Promise.all([inA.ready, inB.ready]);
    let n = 0;
    const post = async (): Promise<{ id: string; sent: number; acked: number }> => {
      const id = String(++n);
      const sent = performance.now();
      const res = await fetch(ingressA.url, { method: 'POST', headers: { ...as('Sender'), 'content-type': 'application/json' }, body: JSON.stringify({ type: 'chat', message: id }) });
      if (res.status !== 200) throw new Error(`POST answered ${res.status}`);
      return { id, sent, acked: performance.now() };
    };

    const phases = new Map<string, Phase>();
    for (const [label, mode] of [['links passing', { kind: 'pass' }], [`links +${DELAY_MS} ms each way`, { kind: 'slow', delayMs: DELAY_MS }]] as const) {
      for (const x of REGIONS) for (const y of REGIONS) if (x < y) sc.setLink(x, y, mode);
      opts.log(`  ${payloads} payloads posted in a, ${label}`);
      const phase: Phase = { ack: new Histogram(), same: new Histogram(), across: new Histogram() };
      for (let i = 0; i < payloads; i++) {
        const p = await post();
        phase.ack.record(p.acked - p.sent);
        await inA.until(() => inA.arrived.has(p.id), 10_000);
        await inB.until(() => inB.arrived.has(p.id), 10_000);
        phase.same.record(inA.arrived.get(p.id)! - p.sent);
        phase.across.record(inB.arrived.get(p.id)! - p.sent);
      }
      phases.set(label, phase);
    }
    // Still slowed: a second open of each account, in the other region.
    const evictions = new Histogram();
    const accounts = opts.quick ? 20 : 50;
    opts.log(`  ${accounts} accounts open in a, then in b, links +${DELAY_MS} ms each way`);
    for (let i = 0; i < accounts; i++) {
      const first = new Listener(gatewayA.url, as(`Moving${i}`));
      listeners.push(first);
      await first.ready;
      const opened = performance.now();
      const second = new Listener(gatewayB.url, as(`Moving${i}`));
      listeners.push(second);
      await first.until(() => first.evictedAt !== null, 10_000);
      evictions.record(first.evictedAt! - opened);
      await second.ready;
      first.close();
      second.close();
    }
    sc.heal();

    opts.log(`  region b cut off for ${cutMs / 1000} s while a posts, then the links return`);
    const older = new Listener(gatewayB.url, as('OpenedTwice'));
    listeners.push(older);
    await older.ready;
    sc.isolate('b');
    const newer = new Listener(gatewayA.url, as('OpenedTwice'));
    listeners.push(newer);
    await newer.ready;
    const during: string[] = [];
    const cutEnds = performance.now() + cutMs;
    while (performance.now() < cutEnds) {
      during.push((await post()).id);
      await new Promise((r) => setTimeout(r, 50));
    }
    const healed = performance.now();
    sc.heal();
    await inB.until(() => during.every((id) => inB.arrived.has(id)), 180_000);
    const catchUpMs = Math.max(...during.map((id) => inB.arrived.get(id)!)) - healed;
    await older.until(() => older.evictedAt !== null, 120_000);
    const duplicateMs = older.evictedAt! - healed;

    const rows = [...phases].flatMap(([label, p]) => [
      [label, 'POST acknowledged', p.ack.percentile(50), p.ack.percentile(99)],
      [label, 'delivered in a (same region)', p.same.percentile(50), p.same.percentile(99)],
      [label, 'delivered in b (across)', p.across.percentile(50), p.across.percentile(99)],
    ]);
    const slow = phases.get(`links +${DELAY_MS} ms each way`)!;
    const targets: Target[] = [
      { name: `delivery across regions p99 with ${DELAY_MS} ms each way <= one round trip + 20 ms`, value: slow.across.percentile(99), bound: 2 * DELAY_MS + 20, kind: 'max', unit: 'ms' },
      // Waiting for another region would cost at least a round trip on every acknowledgement.
      { name: `POST acknowledgement p99 with ${DELAY_MS} ms each way < one inter-region round trip (writes stay local)`, value: slow.ack.percentile(99), bound: 2 * DELAY_MS, kind: 'max', unit: 'ms' },
      { name: `eviction by an open in another region p99 with ${DELAY_MS} ms each way <= one round trip + 50 ms`, value: evictions.percentile(99), bound: 2 * DELAY_MS + 50, kind: 'max', unit: 'ms' },
    ];
    const text = [
      table(['links', 'what', 'p50 ms', 'p99 ms'], rows),
      '',
      `Eviction by an open in the other region, links +${DELAY_MS} ms each way, ${accounts} accounts: p50 ${evictions.percentile(50).toFixed(1)} ms, p99 ${evictions.percentile(99).toFixed(1)} ms (from the second open's request).`,
      `Catch-up: ${during.length} payloads posted in a while b was cut off for ${cutMs / 1000} s reached b's stream ${(catchUpMs / 1000).toFixed(1)} s after the links returned (nothing posted after).`,
      `Duplicate: an account opened in b before the cut and in a during it had b's older stream evicted ${(duplicateMs / 1000).toFixed(1)} s after the links returned.`,
    ].join('\n');
    return { scenario: 'regions', text, targets, data: { payloads, delayMs: DELAY_MS, cutMs, catchUpMs, duplicateMs, evictions: evictions.toSparse(), posted: during.length, phases: Object.fromEntries([...phases].map(([k, p]) => [k, { ack: p.ack.toSparse(), same: p.same.toSparse(), across: p.across.toSparse() }])) } };
  } finally {
    for (const l of listeners) l.close();
    for (const s of services.reverse()) await s.close();
    await sc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
