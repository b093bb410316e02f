// npx tsx bench/connection-gate.ts [--connections N] [--held N] [--rounds N]
// What the connection gate (services/core/connection-gate.ts: a per-address count and a first-byte
// deadline) costs a connection, against the same bare node:http server without it, run alternately in
// their own processes: (1) short connections, one request each, from 200 loopback addresses:
// connections per second, the server's CPU per connection, and the time the connection listeners
// ahead of Node's own took (the gate's work alone, median and p90: whole-server figures on a shared
// machine swing more than it costs), then the heap right after them (a reset socket's timer keeps it
// for up to 2 s); (2) N held connections (a stream's, after the first-byte deadline has passed): heap
// and RSS per connection.
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { httpOk, waitUntil } from '../tools/poll.js';
import { freePort } from '../tools/ports.js';
import { readFileSync, rmSync } from 'node:fs';
import { BENCH_START, cpuSeconds, startProc, type Proc } from './lib/procs.js';
import { table } from './lib/report.js';
import { GC_ON_SIGNAL, memoryFileFor } from './systems/system.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const CONNECTIONS = arg('connections', 20_000);
const HELD = arg('held', 10_000);
const ROUNDS = arg('rounds', 3);
const IN_FLIGHT = 200;
const ADDRESSES = Array.from({ length: 200 }, (_, i) => `127.0.${1 + Math.floor(i / 100)}.${(i % 100) + 2}`);
const PEER = fileURLToPath(new URL('./peers/gated-server.ts', import.meta.url));

async function start(gated: boolean, port: number): Promise<Proc> {
  const name = `gated-server-${gated ? 'on' : 'off'}`;
  const proc = startProc(name, process.execPath, [...GC_ON_SIGNAL, PEER], { PORT: String(port), GATED: gated ? '1' : '0', BENCH_MEMORY_FILE: memoryFileFor(name) });
  await waitUntil(() => httpOk(`http://127.0.0.1:${port}/`), 'the server to answer', BENCH_START);
  return proc;
}

function once(port: number, from: string, request: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from }, () => s.end(request));
    s.on('data', () => undefined);
    s.on('error', reject);
    s.on('close', () => resolve());
  });
}

/** CONNECTIONS short connections, IN_FLIGHT at a time: per second, and server CPU µs each. */
async function shortConnections(port: number, pid: number): Promise<[number, number]> {
  const request = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  let next = 0;
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CONNECTIONS) {
        const i = next++;
        await once(port, ADDRESSES[i % ADDRESSES.length]!, request);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return [CONNECTIONS / seconds, ((cpuSeconds(pid) - cpu0) * 1e6) / CONNECTIONS];
}

/** The server's heap and RSS after a full collection. */
async function memory(proc: Proc, file: string): Promise<{ heapUsed: number; rss: number }> {
  rmSync(file, { force: true });
  proc.child.kill('SIGUSR2');
  return waitUntil(() => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number; rss: number };
    } catch {
      return undefined;
    }
  }, 'the memory report');
}

/** HELD connections each holding GET /hold, past the first-byte deadline: server heap and RSS bytes each. */
async function heldConnections(port: number, proc: Proc, file: string): Promise<[number, number]> {
  const before = await memory(proc, file);
  const sockets = [];
  for (let i = 0; i < HELD; i += IN_FLIGHT) {
    sockets.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(IN_FLIGHT, HELD - i) }, (_, j) =>
          new Promise<ReturnType<typeof connect>>((resolve, reject) => {
            const s = connect({ port, host: '127.0.0.1', localAddress: ADDRESSES[(i + j) % ADDRESSES.length] }, () => s.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n'));
            s.once('data', () => resolve(s));
            s.on('error', reject);
          }),
        ),
      )),
    );
  }
  // Past the first-byte deadline: what stays is what a stream's connection keeps.
  await new Promise((r) => setTimeout(r, 3000));
  const after = await memory(proc, file);
  for (const s of sockets) s.destroy();
  return [(after.heapUsed - before.heapUsed) / HELD, (after.rss - before.rss) / HELD];
}

const rows: Array<Array<string | number>> = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const gated of [false, true]) {
    const port = await freePort();
    const proc = await start(gated, port);
    try {
      await fetch(`http://127.0.0.1:${port}/gate-cost`);
      const [perSecond, cpuMicros] = await shortConnections(port, proc.pid);
      const cost = (await (await fetch(`http://127.0.0.1:${port}/gate-cost`)).json()) as { median: number; p90: number };
      const afterStorm = (await memory(proc, memoryFileFor(proc.name))).heapUsed;
      // Past the first-byte deadline, so the storm's reset sockets are gone before the held ones come.
      await new Promise((r) => setTimeout(r, 3000));
      const [heap, rss] = await heldConnections(port, proc, memoryFileFor(proc.name));
      rows.push([round, gated ? 'gated' : 'bare', Math.round(perSecond), cpuMicros.toFixed(1), `${cost.median.toFixed(2)} / ${cost.p90.toFixed(2)}`, (afterStorm / 2 ** 20).toFixed(1), Math.round(heap), (rss / 1024).toFixed(2)]);
    } finally {
      await proc.stop();
    }
  }
}
console.log(`${CONNECTIONS} short connections (${IN_FLIGHT} at a time, ${ADDRESSES.length} addresses), then ${HELD} held`);
console.log(
  table(['round', 'server', 'connections/s', 'server CPU µs/connection', 'listeners µs (median / p90)', 'heap MiB after the storm', 'heap bytes/held connection', 'RSS KiB/held connection'], rows),
);
