// The relay as a system under test, in its production shape: a nats-server (or a cluster of three),
// an ingress process and gateway processes (separate OS processes), authenticated clients, a real
// profile API.

import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../services/core/config.js';
import { createLogger } from '../../services/core/logger.js';
import { KeyStore } from '../../services/core/keys.js';
import { openNatsContext } from '../../services/core/nats.js';
import { setUpFromConfig } from '../../services/core/nats-setup.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { startNatsCluster, startNatsNode } from '../../tools/nats-launcher.js';
import { httpOk, pollUntil, waitUntil } from '../../tools/poll.js';
import { freePort } from '../../tools/ports.js';
import { startBenchProfileApi } from '../peers/profile-api.js';
import { BENCH_START, LOG_DIR, rssBytes, startProc, type Proc } from '../lib/procs.js';
import { GC_ON_SIGNAL, memoryFileFor, NODE_ENV_FOR_SYSTEMS, PAYLOAD_BODY, type System } from './system.js';

const RELAY_BIN = fileURLToPath(new URL('../../bin/relay.js', import.meta.url));
const PHASE_PROFILER = fileURLToPath(new URL('../peers/profile-on-signal.ts', import.meta.url));

export interface RelaySystem extends System {
  /** Every NATS node's URL, comma-separated (NATS_URL). */
  natsUrl: string;
  natsPids: number[];
  ingressPid: number;
  gatewayPorts: number[];
  gatewayPids: number[];
  ingressPort: number;
  /**
   * With BENCH_PROFILE=phases, where each gateway writes the CPU profile of a phase (the profiler is
   * started and stopped by SIGWINCH: bench/peers/profile-on-signal.ts); null otherwise.
   */
  phaseProfiles: string[] | null;
  /** Stream spec against gateway `index` (eviction uses two). */
  streamSpecOn(index: number, count: number, channels: string[], concurrency: number): ReturnType<System['streamSpec']>;
  ingressRequest(body: string, channel: string): string;
}

/**
 * `cluster`: three clustered nats-servers with the log and the buckets replicated three times (the
 * production shape of the mesh); each relay process connects to a node the NATS client picks at
 * random from the list, as in production.
 */
export async function startRelay(options: { gateways?: number; env?: Record<string, string>; cluster?: boolean } = {}): Promise<RelaySystem> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
  const natsNodes = options.cluster === true ? (await startNatsCluster(join(dir, 'nats'))).nodes : [await startNatsNode({ storeDir: join(dir, 'nats') })];
  const natsUrls = natsNodes.map((n) => n.url);
  const profile = await startBenchProfileApi();
  const env = {
    ...NODE_ENV_FOR_SYSTEMS,
    NATS_URL: natsUrls.join(','),
    ...(options.cluster === true ? { STREAM_REPLICAS: '3', KV_REPLICAS: '3' } : {}),
    PROFILE_API_URL: profile.url,
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
    NODE_ENV: 'production',
    RATE_LIMIT_PER_SECOND: '0',
    RATE_LIMIT_BYTES_PER_SECOND: '0',
    // Thousands of clients from 127.0.0.1: one address's look-up and open rates would refuse them.
    PROFILE_API_RATE_PER_ADDRESS: '0',
    STREAM_OPEN_RATE: '0',
    STREAM_MAX_BYTES: '2GiB',
    ...options.env,
  };
  // The key every benchmark client uses (created before the services start, so they load it).
  const config = loadConfig('all', env);
  // The operator's set-up, before the services start against it.
  await setUpFromConfig(config, createLogger({ level: 'warn', pretty: false }));
  const ctx = await openNatsContext(config, 'bench', createLogger({ level: 'warn', pretty: false }));
  const keys = new KeyStore(ctx.js, ctx.buckets.keys, createLogger({ level: 'warn', pretty: false }));
  const key = await keys.create({ scopes: ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated'), label: 'bench' });
  await ctx.nc.drain();

  // BENCH_PROFILE=ingress|gateway writes a V8 CPU profile of that service to bench/results/profiles
  // (its whole life); =phases lets the scale scenario profile the gateways phase by phase.
  const profiled = process.env['BENCH_PROFILE'];
  const profileDir = join(process.cwd(), 'bench', 'results', 'profiles');
  const phaseProfile = (g: number): string => join(profileDir, `phase-gw${g + 1}.cpuprofile`);
  const phaseEnv = (g: number): Record<string, string> => (profiled === 'phases' ? { BENCH_PHASE_PROFILE: phaseProfile(g) } : {});
  if (profiled === 'phases') mkdirSync(profileDir, { recursive: true });
  // BENCH_GATEWAY_FLAGS: more Node flags for the gateways (--trace-gc prints every collection to their log).
  const gatewayFlags = (process.env['BENCH_GATEWAY_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
  const nodeArgs = (service: string): string[] => [
    ...(profiled === service ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(service === 'gateway' ? gatewayFlags : []),
    ...(service === 'gateway' && profiled === 'phases' ? ['--import', 'tsx', '--import', PHASE_PROFILER] : []),
  ];
  const procs: Proc[] = [];
  const gatewayPorts: number[] = [];
  for (let g = 0; g < (options.gateways ?? 1); g++) {
    const port = await freePort();
    gatewayPorts.push(port);
    procs.push(startProc(`relay-gateway-${g + 1}`, process.execPath, [...nodeArgs('gateway'), ...GC_ON_SIGNAL, RELAY_BIN, 'serve', 'gateway'], { ...env, PORT: String(port), RELAY_NODE_ID: `bench-gw${g + 1}`, BENCH_MEMORY_FILE: memoryFileFor(`relay-gw${g + 1}`), ...phaseEnv(g) }));
  }
  const ingressPort = await freePort();
  const ingress = startProc('relay-ingress', process.execPath, [...nodeArgs('ingress'), RELAY_BIN, 'serve', 'ingress'], { ...env, PORT: String(ingressPort), RELAY_NODE_ID: 'bench-in1' });
  procs.push(ingress);
  for (const port of [...gatewayPorts, ingressPort]) await waitUntil(() => httpOk(`http://127.0.0.1:${port}/readyz`), `relay on port ${port}`, BENCH_START);

  const auth = `client-id: ${key.clientId}\r\nclient-secret: ${key.clientSecret}\r\nuser-agent: bench/1.0+0000000000000000000000000000000000000000`;
  const specOn = (index: number, count: number, channels: string[], concurrency: number): ReturnType<System['streamSpec']> => ({
    endpoint: { host: '127.0.0.1', port: gatewayPorts[index]! },
    count,
    channels,
    concurrency,
    template: `GET /?host={channel} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nauthorization: Bearer bench-P{i}\r\n${auth}\r\n\r\n`,
    readyMarker: ': connected',
  });
  const headers = {
    authorization: 'Bearer bench-publisher',
    'client-id': key.clientId,
    'client-secret': key.clientSecret,
    'user-agent': 'bench/1.0+0000000000000000000000000000000000000000',
  };
  return {
    name: 'relay',
    natsUrl: natsUrls.join(','),
    natsPids: natsNodes.map((n) => n.process.pid!),
    ingressPid: ingress.pid,
    gatewayPorts,
    gatewayPids: procs.slice(0, gatewayPorts.length).map((p) => p.pid),
    phaseProfiles: profiled === 'phases' ? gatewayPorts.map((_, g) => phaseProfile(g)) : null,
    ingressPort,
    pids: () => [...procs.map((p) => p.pid), ...natsNodes.map((n) => n.process.pid!)],
    streamPid: () => procs[0]!.pid,
    memoryFile: memoryFileFor('relay-gw1'),
    streamSpec: (count, channels, concurrency) => specOn(0, count, channels, concurrency),
    streamSpecOn: specOn,
    publishSpec: (channels, perSecond, connections) => ({
      endpoint: { host: '127.0.0.1', port: ingressPort },
      path: '/?host={channel}',
      headers,
      body: PAYLOAD_BODY,
      channels,
      perSecond,
      connections,
    }),
    ingressRequest: (body, channel) =>
      [
        'POST / HTTP/1.1',
        `host: 127.0.0.1:${ingressPort}`,
        'content-type: application/json',
        `content-length: ${Buffer.byteLength(body)}`,
        `x-irc-multiplayer-server: ${channel}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ].join('\r\n') +
      '\r\n\r\n' +
      body,
    async stop() {
      // The gateways' own view (delivery lag from ingress publish to socket write, frames, drops),
      // kept beside the logs for reading a run afterwards.
      for (const [i, port] of gatewayPorts.entries()) {
        const metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
        writeFileSync(join(LOG_DIR, `relay-gateway-${i + 1}.metrics`), metrics);
      }
      await Promise.all(procs.map((p) => p.stop()));
      await profile.close();
      await Promise.all(natsNodes.map((n) => n.stop()));
      // nats-server's own account of the run (slow consumers, route trouble, leader changes).
      for (const [i, n] of natsNodes.entries()) {
        if (existsSync(n.options.logFile)) copyFileSync(n.options.logFile, join(LOG_DIR, `nats-${i + 1}.log`));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Memory of gateway `index` (from 0) after a forced collection: RSS now, and what its process
 * reports (process.memoryUsage(): heapUsed, heapTotal, external, ...; NaN when not written yet).
 */
export async function gatewayMemory(pid: number, index: number): Promise<{ rss: number; heapUsed: number; usage: Record<string, number> }> {
  // The file of the last reading goes first: a gateway busy past the wait must not be read as unchanged.
  const file = memoryFileFor(`relay-gw${index + 1}`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  const read = (): Record<string, number> | undefined => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
    } catch {
      return undefined; // not written (whole) yet
    }
  };
  // Not written within the wait: reported as unknown. RSS is read no sooner than 2 s after the
  // collection is asked for, as it always was: the pages a collection frees leave RSS after it.
  const [usage] = await Promise.all([pollUntil(read, { timeoutMs: 20_000, intervalMs: 250 }), new Promise((r) => setTimeout(r, 2000))]);
  return { rss: rssBytes(pid), heapUsed: usage?.['heapUsed'] ?? NaN, usage: usage ?? {} };
}
