// resume: streams resuming at the newest id (nothing missed) on a gateway whose resume window keeps
// a large channel, side by side with the same resumes on a channel whose window holds a few frames.
// Such a resume is answered from memory; what it costs should not grow with the frames kept. While
// each burst of resumes runs, /healthz is asked back to back on the same gateway: its latency is the
// event loop the resumes take from everything else the gateway serves.

import { connect, type Socket } from 'node:net';
import { Histogram } from '../lib/histogram.js';
import { HttpConn } from '../lib/http-conn.js';
import { cpuSeconds } from '../lib/procs.js';
import { table, type ScenarioOptions, type ScenarioResult, type Target } from '../lib/report.js';
import { startRelay, type RelaySystem } from '../systems/relay.js';
import { waitUntil } from '../../tools/poll.js';

const SMALL = 'bench-resume-small.example.net';
const BIG = 'bench-resume-big.example.net';
const AT_ONCE = 60;
const BATCH = 256;

/** An SSE stream read on a raw socket: how long it took to open, its data frames, its last id. */
class RawStream {
  readonly socket: Socket;
  frames = 0;
  lastId = 0;
  /** Milliseconds to `event: ready`, or the status line of a refusal. */
  readonly opened: Promise<number | string>;
  private rest = '';

  /** `address`: the client's own loopback address, as players each have theirs. */
  constructor(relay: RelaySystem, channel: string, account: string, lastEventId: number | null, address = '127.0.0.1') {
    const start = performance.now();
    const spec = relay.streamSpec(1, [channel], 1);
    const resume = lastEventId === null ? '' : `last-event-id: ${lastEventId}\r\n`;
    const request = spec.template.replace('{channel}', channel).replace('bench-P{i}', `bench-${account}`).replace(/\r\n\r\n$/, `\r\n${resume}\r\n`);
    this.socket = connect({ ...spec.endpoint, localAddress: address });
    this.socket.once('connect', () => this.socket.write(request));
    this.socket.setEncoding('latin1');
    let head = '';
    this.opened = new Promise((resolve) => {
      this.socket.once('close', () => resolve(head.split('\r\n')[0] || 'closed before answering'));
      this.socket.on('data', (chunk: string) => {
        if (head.length < 4096) head += chunk;
        this.read(chunk);
        if (chunk.includes('event: ready')) resolve(performance.now() - start);
      });
    });
  }

  private read(chunk: string): void {
    const lines = (this.rest + chunk).split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('id: ')) continue;
      this.frames++;
      this.lastId = Number(line.slice(4));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

async function publish(relay: RelaySystem, channel: string, entries: number): Promise<void> {
  const body = JSON.stringify(Array.from({ length: BATCH }, () => ({ type: 'chat', message: 'resume bench' })));
  const conns = Array.from({ length: 8 }, () => new HttpConn({ host: '127.0.0.1', port: relay.ingressPort }));
  let left = Math.ceil(entries / BATCH);
  await Promise.all(
    conns.map(async (c) => {
      await c.ready;
      while (left-- > 0) {
        const status = await c.send(relay.ingressRequest(body, channel));
        if (status !== 200) throw new Error(`POST answered ${status}`);
      }
      c.close();
    }),
  );
}

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

interface Burst {
  opens: Histogram;
  refused: number;
  healthz: Histogram;
  cpuSeconds: number;
}

/** AT_ONCE streams resume at `lastId` at once; /healthz is asked back to back until all are open. */
async function burst(relay: RelaySystem, channel: string, lastId: number, into: Burst): Promise<void> {
  const port = relay.gatewayPorts[0]!;
  const health = new HttpConn({ host: '127.0.0.1', port });
  await health.ready;
  const request = `GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`;
  const cpu0 = cpuSeconds(relay.gatewayPids[0]!);
  // The same accounts every burst: their sessions are cached after the first, as a reconnect's are.
  const streams = Array.from({ length: AT_ONCE }, (_, i) => new RawStream(relay, channel, `R${i}`, lastId, `127.0.0.${2 + i}`));
  let done = false;
  const all = Promise.all(streams.map((s) => s.opened)).finally(() => (done = true));
  while (!done) {
    const t = performance.now();
    await health.send(request);
    into.healthz.record(performance.now() - t);
  }
  for (const opened of await all) {
    if (typeof opened === 'number') into.opens.record(opened);
    else into.refused++;
  }
  into.cpuSeconds += cpuSeconds(relay.gatewayPids[0]!) - cpu0;
  for (const s of streams) s.close();
  health.close();
  await waitUntil(async () => (await metric(port, 'relay_streams_open')) === 2, 'the resumed streams to close', { timeoutMs: 30_000, intervalMs: 50 });
}

export async function resumeScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const kept = opts.quick ? 50_000 : 200_000;
  const bursts = opts.quick ? 5 : 15;
  // Room for every frame of the large channel (about 300 bytes each with its bookkeeping).
  const relay = await startRelay({ env: { RESUME_WINDOW_BYTES: '1GiB', STREAM_MAX_MSGS_PER_CHANNEL: '0' } });
  const holders: RawStream[] = [];
  try {
    const port = relay.gatewayPorts[0]!;
    // A stream held on each channel keeps its subscription, and so its window, for the whole run.
    const small = new RawStream(relay, SMALL, 'holder-small', null);
    const big = new RawStream(relay, BIG, 'holder-big', null);
    holders.push(small, big);
    for (const opened of await Promise.all([small.opened, big.opened])) {
      if (typeof opened !== 'number') throw new Error(`a held stream was refused: ${opened}`);
    }
    opts.log(`resume: publishing ${BATCH} frames to one channel and ${kept.toLocaleString('en-US')} to another`);
    await publish(relay, SMALL, BATCH);
    await publish(relay, BIG, kept);
    await waitUntil(() => small.frames >= BATCH && big.frames >= kept, 'the held streams to get every frame', { timeoutMs: 300_000, intervalMs: 100 });
    const windowMiB = (await metric(port, 'relay_resume_window_bytes')) / 2 ** 20;
    const results = new Map<string, Burst>([SMALL, BIG].map((c) => [c, { opens: new Histogram(), refused: 0, healthz: new Histogram(), cpuSeconds: 0 }]));
    // A first burst on each opens the sessions and warms the code; then they alternate, so drift on
    // the shared machine weighs on both alike.
    for (const [channel, holder] of [[SMALL, small], [BIG, big]] as const) await burst(relay, channel, holder.lastId, { opens: new Histogram(), refused: 0, healthz: new Histogram(), cpuSeconds: 0 });
    opts.log(`resume: ${bursts} bursts of ${AT_ONCE} resumes at the newest id on each channel, alternating`);
    for (let b = 0; b < bursts; b++) {
      for (const [channel, holder] of [[SMALL, small], [BIG, big]] as const) await burst(relay, channel, holder.lastId, results.get(channel)!);
    }
    const row = (name: string, frames: number, r: Burst): Array<string | number> => [
      name,
      frames,
      r.opens.count,
      String(r.refused),
      r.opens.percentile(50),
      r.opens.percentile(99),
      r.healthz.percentile(50),
      r.healthz.percentile(99),
      r.healthz.max,
      (r.cpuSeconds * 1000) / r.opens.count,
    ];
    const s = results.get(SMALL)!;
    const l = results.get(BIG)!;
    const text =
      `${AT_ONCE} streams resume at once with Last-Event-ID = the channel's newest id (nothing missed), ${bursts} bursts per channel, alternating; ` +
      `the window holds ${windowMiB.toFixed(0)} MiB. /healthz asked back to back on the same gateway while each burst opens.\n\n` +
      table(['channel window', 'frames kept', 'resumes', 'refused', 'open p50 ms', 'open p99 ms', '/healthz p50 ms', '/healthz p99 ms', '/healthz max ms', 'gateway CPU ms per resume'], [
        row('small', small.frames, s),
        row('large', big.frames, l),
      ]) +
      '\n';
    // Ratios within the run: a resume that misses nothing should cost the same whatever the window holds.
    const targets: Target[] = [
      { name: 'resume: /healthz p99 during 60 resumes, large window / small', value: l.healthz.percentile(99) / s.healthz.percentile(99), bound: 1.5, kind: 'max', unit: 'x' },
      { name: 'resume: gateway CPU per resume, large window / small', value: l.cpuSeconds / s.cpuSeconds, bound: 1.25, kind: 'max', unit: 'x' },
    ];
    return { scenario: 'resume', text, targets, data: { kept, bursts, atOnce: AT_ONCE, windowMiB, small: summary(s), large: summary(l) } };
  } finally {
    for (const h of holders) h.close();
    await relay.stop();
  }
}

function summary(r: Burst): Record<string, number> {
  return {
    resumes: r.opens.count,
    refused: r.refused,
    openP50: r.opens.percentile(50),
    openP99: r.opens.percentile(99),
    healthzP50: r.healthz.percentile(50),
    healthzP99: r.healthz.percentile(99),
    healthzMax: r.healthz.max,
    cpuMsPerResume: (r.cpuSeconds * 1000) / r.opens.count,
  };
}
