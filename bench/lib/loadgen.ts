// The load generator: its own process, driven by the harness over IPC. It holds the SSE streams on
// raw sockets (no SSE library: it only counts frames and reads the send time embedded in each),
// publishes at a fixed rate (open loop, timed from the scheduled send so a backlog shows as
// latency), and reports its own CPU so a saturated generator is visible in every result.

import { connect, type Socket } from 'node:net';
import { Histogram } from './histogram.js';
import { HttpConn, postRequest, type Endpoint } from './http-conn.js';

export interface StreamSpec {
  endpoint: Endpoint;
  count: number;
  /** Raw GET request; {i} and {channel} are substituted. */
  template: string;
  channels: string[];
  /** Text that tells the stream is open and subscribed. */
  readyMarker: string;
  concurrency: number;
  /** Index offset for {i} (to open more streams later with distinct identities). */
  offset?: number;
  /**
   * Channel sizes: every channel gets its count of streams, spread over the index range in a
   * fixed shuffled order, instead of `channels` round robin (the scale scenario's spread).
   */
  plan?: Array<{ channel: string; count: number }>;
  /**
   * Reopen a refused stream as the published client does (docs/real-clients: 1 s x 2^n, at most
   * 30 s), until it is open or `retry.untilMs` after the start; refusals are counted apart.
   */
  retry?: { untilMs: number };
  /**
   * Open as the published client reconnects: with Last-Event-ID, the last id this stream index saw
   * (kept across dropAll), or `lastEventId` when it saw none yet.
   */
  resume?: { lastEventId: number };
}

export interface PublishSpec {
  endpoint: Endpoint;
  /** {channel} is substituted. */
  path: string;
  headers: Record<string, string>;
  /** JSON body; {channel} and {ts} are substituted ({ts}: the send time in ms). */
  body: string;
  channels: string[];
  perSecond: number;
  connections: number;
}

export type Command =
  | { cmd: 'open'; spec: StreamSpec }
  | { cmd: 'fanout'; publish: PublishSpec; warmupMs: number; measureMs: number }
  /** Measures what arrives on this generator's streams while another one publishes. */
  | { cmd: 'listen'; warmupMs: number; measureMs: number }
  | { cmd: 'pause'; index: number }
  | { cmd: 'dropAll' }
  | { cmd: 'count' }
  | { cmd: 'ingress'; endpoint: Endpoint; request: string; connections: number; warmupMs: number; measureMs: number }
  | { cmd: 'evict'; first: StreamSpec; second: StreamSpec; trials: number }
  | { cmd: 'exit' };

const TS = Buffer.from('t=');
const ID = Buffer.from('\nid: ');
/** The last SSE id each stream index saw, kept when its stream is dropped (a reconnect resumes from it). */
const lastIds = new Map<number, number>();
const LOCAL_ADDRESSES = Array.from({ length: 200 }, (_, i) => `127.0.0.${i + 2}`);
const now = (): number => performance.timeOrigin + performance.now();

class StreamConn {
  readonly socket: Socket;
  ready = false;
  closed = false;
  frames = 0;
  private tail: Buffer | null = null;
  private head = '';
  readonly opened: Promise<boolean>;
  readonly ended: Promise<void>;

  constructor(endpoint: Endpoint, request: string, marker: string, localAddress: string, private readonly sink: Sink, private readonly index = -1) {
    this.socket = connect({ host: endpoint.host, port: endpoint.port, localAddress });
    let resolveOpen!: (ok: boolean) => void;
    this.opened = new Promise((r) => (resolveOpen = r));
    this.ended = new Promise((r) => this.socket.once('close', () => r()));
    this.socket.once('connect', () => this.socket.write(request));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      resolveOpen(false);
    });
    this.socket.on('data', (chunk: Buffer) => {
      if (!this.ready) {
        this.head += chunk.toString('latin1');
        if (this.head.includes(marker)) {
          this.lastId(chunk);
          this.ready = true;
          this.head = '';
          resolveOpen(true);
        } else if (/^HTTP\/1\.1 [^2]/.test(this.head)) {
          this.socket.destroy();
        }
        return;
      }
      this.scan(chunk);
    });
  }

  /** Remembers the newest id this stream index saw, for its next open's Last-Event-ID. */
  private lastId(chunk: Buffer): void {
    if (this.index < 0) return;
    const id = newestId(chunk);
    if (id !== null) lastIds.set(this.index, id);
  }

  /** Counts delivered frames and records their latency; a timestamp split across chunks is kept. */
  private scan(chunk: Buffer): void {
    this.lastId(chunk);
    let buf = chunk;
    if (this.tail !== null) {
      buf = Buffer.concat([this.tail, chunk]);
      this.tail = null;
    }
    const t = now();
    let at = buf.indexOf(TS);
    while (at !== -1) {
      let end = at + 2;
      while (end < buf.length && ((buf[end]! >= 48 && buf[end]! <= 57) || buf[end] === 46)) end++;
      if (end === buf.length) {
        this.tail = buf.subarray(at);
        return;
      }
      const sent = Number(buf.toString('latin1', at + 2, end));
      this.frames++;
      this.sink.record(t - sent);
      at = buf.indexOf(TS, end);
    }
    if (buf.length >= 1 && buf[buf.length - 1] === 116) this.tail = buf.subarray(buf.length - 1); // a trailing "t"
  }
}

/** The newest `id:` line of a chunk (a line split across chunks is missed: the next frame's id follows). */
function newestId(chunk: Buffer): number | null {
  const at = chunk.lastIndexOf(ID);
  if (at === -1) return null;
  const end = chunk.indexOf(10, at + ID.length);
  if (end === -1) return null;
  const id = Number(chunk.toString('latin1', at + ID.length, end));
  return Number.isSafeInteger(id) ? id : null;
}

class Sink {
  hist = new Histogram();
  delivered = 0;
  record(ms: number): void {
    this.delivered++;
    this.hist.record(ms);
  }
  reset(): void {
    this.hist = new Histogram();
    this.delivered = 0;
  }
}

const sink = new Sink();
let streams: StreamConn[] = [];

async function openStreams(spec: StreamSpec, into: StreamConn[] = streams): Promise<{ opened: number; failed: number; refused: number; ms: number }> {
  const started = performance.now();
  let next = 0;
  let opened = 0;
  let failed = 0;
  let refused = 0;
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
  return { opened, failed, refused, ms: performance.now() - started };
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

interface PublishResult {
  sent: number;
  acked: number;
  errors: number;
}

/** Publishes at a fixed rate for `ms`; the timestamp is the scheduled send time. */
async function publishFor(spec: PublishSpec, ms: number, conns: HttpConn[]): Promise<PublishResult> {
  const result: PublishResult = { sent: 0, acked: 0, errors: 0 };
  const start = now();
  const end = start + ms;
  const interval = 1000 / spec.perSecond;
  const backlog: number[] = [];
  let channel = 0;
  const send = (conn: HttpConn, scheduled: number): void => {
    const ch = spec.channels[channel++ % spec.channels.length]!;
    const body = spec.body.replaceAll('{channel}', ch).replaceAll('{ts}', scheduled.toFixed(3));
    const path = spec.path.replaceAll('{channel}', ch);
    result.sent++;
    void conn.send(postRequest(path, `${spec.endpoint.host}:${spec.endpoint.port}`, spec.headers, body)).then((status) => {
      if (status >= 200 && status < 300) result.acked++;
      else result.errors++;
      const nextDue = backlog.shift();
      if (nextDue !== undefined && !conn.closed) send(conn, nextDue);
    });
  };
  let due = start;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const t = now();
      while (due <= t && due < end) {
        const idle = conns.find((c) => !c.busy && !c.closed);
        if (idle !== undefined) send(idle, due);
        else backlog.push(due);
        due += interval;
      }
      if (t >= end) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  // Let in-flight requests finish (bounded) so their frames are counted where they belong.
  const drainDeadline = now() + 2000;
  while ((backlog.length > 0 || conns.some((c) => c.busy)) && now() < drainDeadline) await new Promise((r) => setTimeout(r, 5));
  result.errors += backlog.length;
  return result;
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
