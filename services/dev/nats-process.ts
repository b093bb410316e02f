// Starting a real nats-server: for `npm start` (a local JetStream node under .data/) and for tests
// and the mesh script (single nodes and three-node clusters on loopback ports). nats-server is a
// real dependency; when it is missing we install Debian's package if we can, else say how.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

export class NatsServerMissing extends Error {}

/** Path of the nats-server binary, installing Debian's package when running as root with apt. */
export function findNatsServer(options: { install?: boolean } = {}): string {
  const found = lookup();
  if (found !== null) return found;
  if (options.install !== false && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    process.stderr.write('nats-server is missing; installing the Debian package (apt-get install -y nats-server)...\n');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    let r = spawnSync('apt-get', ['install', '-y', '-qq', 'nats-server'], { stdio: 'inherit', env });
    if (r.status !== 0) {
      spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      r = spawnSync('apt-get', ['install', '-y', '-qq', 'nats-server'], { stdio: 'inherit', env });
    }
    const after = lookup();
    if (after !== null) return after;
  }
  throw new NatsServerMissing(
    'nats-server (2.9 or newer) is not installed. Install it with "sudo apt-get install -y nats-server" on Debian/Ubuntu, ' +
      'or download it from https://github.com/nats-io/nats-server/releases, or point NATS_URL at a running server.',
  );
}

function lookup(): string | null {
  const fromPath = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  if (fromPath.status === 0 && fromPath.stdout.trim() !== '') return fromPath.stdout.trim();
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface NatsNodeOptions {
  /** JetStream store directory. */
  storeDir: string;
  port?: number;
  monitorPort?: number;
  serverName?: string;
  cluster?: { name: string; port: number; routes: number[] };
  /** Where nats-server writes its log; defaults to <storeDir>/nats.log. */
  logFile?: string;
}

export interface NatsNode {
  url: string;
  port: number;
  monitorPort: number;
  serverName: string;
  options: NatsNodeOptions & { port: number; monitorPort: number; serverName: string };
  process: ChildProcess;
  /** SIGTERM and wait (SIGKILL after a while). */
  stop(): Promise<void>;
  /** SIGKILL, no goodbye: the crash a fault test wants. */
  kill(): Promise<void>;
}

/** Starts one nats-server with JetStream and resolves once it reports healthy. */
export async function startNatsNode(options: NatsNodeOptions): Promise<NatsNode> {
  const binary = findNatsServer();
  const port = options.port ?? (await freePort());
  const monitorPort = options.monitorPort ?? (await freePort());
  const serverName = options.serverName ?? `relay-${port}`;
  mkdirSync(options.storeDir, { recursive: true });
  const configFile = join(options.storeDir, `${serverName}.conf`);
  const lines = [
    `server_name: "${serverName}"`,
    `listen: "127.0.0.1:${port}"`,
    `http: "127.0.0.1:${monitorPort}"`,
    `jetstream { store_dir: "${options.storeDir}" }`,
  ];
  if (options.cluster !== undefined) {
    const routes = options.cluster.routes.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ');
    lines.push(`cluster { name: "${options.cluster.name}", listen: "127.0.0.1:${options.cluster.port}", routes: [${routes}] }`);
  }
  writeFileSync(configFile, lines.join('\n') + '\n');
  const logFile = options.logFile ?? join(options.storeDir, `${serverName}.log`);
  const child = spawn(binary, ['-c', configFile, '-l', logFile], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const node: NatsNode = {
    url: `nats://127.0.0.1:${port}`,
    port,
    monitorPort,
    serverName,
    options: { ...options, port, monitorPort, serverName },
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  await waitHealthy(node, options.cluster === undefined ? 'js-enabled-only=true' : '', child);
  return node;
}

/** Waits for /healthz; for a cluster node, only for the server itself (JetStream needs a quorum). */
export async function waitHealthy(node: Pick<NatsNode, 'monitorPort'>, query: string, child?: ChildProcess, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child !== undefined && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`nats-server exited during start-up (code ${String(child.exitCode)}); see its log file`);
    }
    try {
      const r = await fetch(`http://127.0.0.1:${node.monitorPort}/healthz${query === '' ? '' : `?${query}`}`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`nats-server on monitor port ${node.monitorPort} did not become healthy`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Comma-separated client URLs of every node, for NATS_URL. */
  urls: string;
  stop(): Promise<void>;
  /** Restarts a stopped or killed node with its original ports and store. */
  restart(index: number): Promise<NatsNode>;
}

/** Three (or n) JetStream nodes in one cluster on loopback, healthy with a meta leader. */
export async function startNatsCluster(baseDir: string, size = 3, name = 'relay'): Promise<NatsCluster> {
  const clientPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const clusterPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const monitorPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const optionsFor = (i: number): NatsNodeOptions => ({
    storeDir: join(baseDir, `n${i + 1}`),
    port: clientPorts[i]!,
    monitorPort: monitorPorts[i]!,
    serverName: `${name}-n${i + 1}`,
    cluster: { name, port: clusterPorts[i]!, routes: clusterPorts.filter((_, j) => j !== i) },
  });
  const nodes = await Promise.all(Array.from({ length: size }, (_, i) => startNatsNode(optionsFor(i))));
  await Promise.all(nodes.map((n) => waitHealthy(n, 'js-enabled-only=true', n.process, 30_000)));
  const cluster: NatsCluster = {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    async stop() {
      await Promise.all(cluster.nodes.map((n) => n.stop()));
    },
    async restart(index: number) {
      const node = await startNatsNode(optionsFor(index));
      cluster.nodes[index] = node;
      return node;
    },
  };
  return cluster;
}
