// The load generator: its own process, driven by the harness over IPC (loadgen-commands.ts). It holds
// the SSE streams on raw sockets (stream-conn.ts), publishes at a fixed rate (publish-load.ts), and
// reports its own CPU so a saturated generator is visible in every result.

import { Histogram } from './histogram.js';
import { HttpConn } from './http-conn.js';
import type { Command, StreamSpec } from './loadgen-commands.js';
import { publishFor } from './publish-load.js';
import { lastIds, Sink, StreamConn } from './stream-conn.js';

const LOCAL_ADDRESSES = Array.from({ length: 200 }, (_, i) => `127.0.0.${i + 2}`);

const sink = new Sink();
let streams: StreamConn[] = [];

async function openStreams(spec: StreamSpec, into: StreamConn[] = streams): Promise<{ opened: number; failed: number; refused: number; reasons: Record<string, number>; ms: number }> {
  const started = performance.now();
  let next = 0;
  let opened = 0;
  let failed = 0;
  let refused = 0;
  /** Every failed attempt (refused and retried, or failed for good), by `<status> <code>`. */
  const reasons: Record<string, number> = {};
  const offset = spec.offset ?? 0;
  const planned = spec.plan === undefined ? undefined : shuffled(spec.plan.flatMap((p) => Array<string>(p.count).fill(p.channel)));
  const worker = async (): Promise<void> => {
    while (next < spec.count) {
      const i = next++;
      const n = i + offset;
      const channel = planned?.[n] ?? spec.channels[n % spec.channels.length]!;
      const base = spec.template.replaceAll('{i}', String(n)).replaceAll('{channel}', channel);
      for (let attempt = 0; ; attempt++) {
        // Read at each attempt: a retried open resumes from what the stream saw last, as the client does.
        const req = spec.resume === undefined ? base : base.replace(/\r\n\r\n$/, `\r\nLast-Event-ID: ${lastIds.get(n) ?? spec.resume.lastEventId}\r\n\r\n`);
        const s = new StreamConn(spec.endpoint, req, spec.readyMarker, LOCAL_ADDRESSES[n % LOCAL_ADDRESSES.length]!, sink, n);
        into.push(s);
        if (await s.opened) {
          opened++;
          break;
        }
        const why = s.refusal ?? 'unknown';
        reasons[why] = (reasons[why] ?? 0) + 1;
        const wait = Math.min(30_000, 1000 * 2 ** attempt);
        if (spec.retry === undefined || performance.now() + wait - started > spec.retry.untilMs) {
          failed++;
          break;
        }
        refused++;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(spec.concurrency, spec.count) }, worker));
  return { opened, failed, refused, reasons, ms: performance.now() - started };
}

/**
 * The same order in every generator process (a fixed seed): a channel's streams are spread over
 * every generator and gateway, as a server's players land on any gateway of a mesh.
 */
function shuffled<T>(items: T[]): T[] {
  let seed = 0x9e3779b9;
  const random = (): number => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

async function fanout(cmd: Extract<Command, { cmd: 'fanout' }>): Promise<unknown> {
  const conns = Array.from({ length: cmd.publish.connections }, (_, i) => new HttpConn(cmd.publish.endpoint, LOCAL_ADDRESSES[i % 10]));
  await Promise.all(conns.map((c) => c.ready));
  await publishFor(cmd.publish, cmd.warmupMs, conns);
  // Frames of the warm-up still in flight would count against the measurement: settle first.
  await new Promise((r) => setTimeout(r, 200));
  sink.reset();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const pub = await publishFor(cmd.publish, cmd.measureMs, conns);
  await new Promise((r) => setTimeout(r, 300));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  for (const c of conns) c.close();
  return {
    ...pub,
    delivered: sink.delivered,
    seconds: cmd.measureMs / 1000,
    hist: sink.hist.toSparse(),
    loadgenCpu: ((cpu.user + cpu.system) / 1e6 / elapsed) * 100,
  };
}

async function listen(cmd: Extract<Command, { cmd: 'listen' }>): Promise<unknown> {
  await new Promise((r) => setTimeout(r, cmd.warmupMs + 200));
  sink.reset();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, cmd.measureMs + 300));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { delivered: sink.delivered, seconds: cmd.measureMs / 1000, hist: sink.hist.toSparse(), loadgenCpu: ((cpu.user + cpu.system) / 1e6 / elapsed) * 100 };
}

async function ingress(cmd: Extract<Command, { cmd: 'ingress' }>): Promise<unknown> {
  const conns = Array.from({ length: cmd.connections }, (_, i) => new HttpConn(cmd.endpoint, LOCAL_ADDRESSES[i % 50]));
  await Promise.all(conns.map((c) => c.ready));
  const statuses: Record<string, number> = {};
  const hist = new Histogram();
  let measuring = false;
  let done = false;
  let count = 0;
  const loop = async (c: HttpConn): Promise<void> => {
    while (!done && !c.closed) {
      const t = performance.now();
      const status = await c.send(cmd.request);
      if (measuring) {
        count++;
        hist.record(performance.now() - t);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }
  };
  const loops = conns.map((c) => loop(c));
  await new Promise((r) => setTimeout(r, cmd.warmupMs));
  measuring = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, cmd.measureMs));
  measuring = false;
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  done = true;
  await Promise.all(loops);
  for (const c of conns) c.close();
  return { requests: count, perSecond: count / elapsed, statuses, hist: hist.toSparse(), loadgenCpu: ((cpu.user + cpu.system) / 1e6 / elapsed) * 100 };
}

async function evict(cmd: Extract<Command, { cmd: 'evict' }>): Promise<unknown> {
  const hist = new Histogram();
  const samples: number[] = [];
  let failures = 0;
  for (let trial = 0; trial < cmd.trials; trial++) {
    const first: StreamConn[] = [];
    const r1 = await openStreams({ ...cmd.first, count: 1, offset: (cmd.first.offset ?? 0) + trial, concurrency: 1 }, first);
    if (r1.opened !== 1) {
      failures++;
      continue;
    }
    const second: StreamConn[] = [];
    const t0 = performance.now();
    const closedAt = first[0]!.ended.then(() => performance.now());
    await openStreams({ ...cmd.second, count: 1, offset: (cmd.second.offset ?? 0) + trial, concurrency: 1 }, second);
    const ms = (await Promise.race([closedAt, new Promise<number>((r) => setTimeout(() => r(NaN), 5000))])) - t0;
    if (Number.isNaN(ms)) failures++;
    else {
      hist.record(ms);
      samples.push(ms);
    }
    for (const s of [...first, ...second]) s.socket.destroy();
  }
  return { hist: hist.toSparse(), trials: cmd.trials, failures };
}

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case 'open':
      return openStreams(command.spec);
    case 'fanout':
      return fanout(command);
    case 'listen':
      return listen(command);
    case 'pause':
      streams[command.index]?.socket.pause();
      return { paused: command.index };
    case 'dropAll': {
      const old = streams;
      streams = [];
      for (const s of old) s.socket.destroy();
      await Promise.all(old.map((s) => s.ended));
      return { dropped: old.length };
    }
    case 'count':
      return { open: streams.filter((s) => s.ready && !s.closed).length, closed: streams.filter((s) => s.closed).length };
    case 'ingress':
      return ingress(command);
    case 'evict':
      return evict(command);
    case 'exit':
      setImmediate(() => process.exit(0));
      return { bye: true };
  }
}

process.on('message', (message: { id: number; command: Command }) => {
  handle(message.command).then(
    (result) => process.send?.({ id: message.id, result }),
    (err: unknown) => process.send?.({ id: message.id, error: err instanceof Error ? err.stack : String(err) }),
  );
});
