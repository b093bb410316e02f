// Starting a real nats-server: for `npm start` (a local JetStream node under .data/) and for tests,
// benchmarks and the mesh script (single nodes and three-node clusters on loopback ports).
// nats-server is a real dependency; when it is missing we install Debian's package if we can, else
// say how.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aptInstall, commandPath } from './apt.js';
import { endChild, exitOf, running } from './child.js';
import { httpOk, waitUntil } from './poll.js';
import { freePort } from './ports.js';

// Debian puts it in /usr/sbin, which is not on every user's PATH.
const CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

export class NatsServerMissing extends Error {}

/** Path of the nats-server binary, installing Debian's package when running as root with apt. */
export function findNatsServer(options: { install?: boolean } = {}): string {
  const found = commandPath('nats-server', CANDIDATES);
  if (found !== null) return found;
  if (options.install !== false && aptInstall('nats-server')) {
    const after = commandPath('nats-server', CANDIDATES);
    if (after !== null) return after;
  }
  throw new NatsServerMissing(
    'nats-server (2.9 or newer) is not installed. Install it with "sudo apt-get install -y nats-server" on Debian/Ubuntu, ' +
      'or download it from https://github.com/nats-io/nats-server/releases, or point NATS_URL at a running server.',
  );
}

export interface NatsNodeOptions {
  /** JetStream store directory. */
  storeDir: string;
  port?: number;
  monitorPort?: number;
  serverName?: string;
  /**
   * `routes`: ports on 127.0.0.1 this node dials (the fault campaign points them at its proxies);
   * `settings`: more lines inside the cluster block (`no_advertise`, `advertise`).
   */
  cluster?: { name: string; port: number; routes: number[]; settings?: string };
  /** Where nats-server writes its log; defaults to <storeDir>/nats.log. */
  logFile?: string;
  /**
   * In its own process group, so a terminal's Ctrl-C (SIGINT to the whole foreground group) reaches
   * only the launcher, which stops this server after its own clients have closed (npm start).
   */
  ownProcessGroup?: boolean;
  /** More configuration (a tls block, users and permissions), appended as given. */
  extraConfig?: string;
  /** Environment of the server: its configuration may read variables ($NAME) from it. */
  env?: NodeJS.ProcessEnv;
  /** The nats-server binary to run (the fault campaign compares versions); found on the machine otherwise. */
  binary?: string;
  /**
   * How long to wait for /healthz (15 s). A clustered node restarted after a fault says "stream not
   * current" until it has caught up, which under load took longer than that; a supervisor waits.
   */
  healthTimeoutMs?: number;
  /**
   * Return the node still running when it is not healthy in time, as a supervisor leaves a node
   * that is catching up (its health is then the caller's to watch); by default it is killed and the
   * start fails.
   */
  keepUnhealthy?: boolean;
}

export interface NatsNode {
  url: string;
  port: number;
  monitorPort: number;
  serverName: string;
  options: NatsNodeOptions & { port: number; monitorPort: number; serverName: string; logFile: string };
  process: ChildProcess;
  /** SIGTERM and wait (SIGKILL after a while). */
  stop(): Promise<void>;
  /** SIGKILL, no goodbye: the crash a fault test wants. */
  kill(): Promise<void>;
}

/**
 * Starts one nats-server with JetStream and resolves once it reports healthy. With ports left to it,
 * a start that fails (a free port taken by another process before nats-server bound it, seen in a
 * full test run) is tried again on new ports, up to three times.
 */
export async function startNatsNode(options: NatsNodeOptions): Promise<NatsNode> {
  const ownPorts = options.port === undefined && options.monitorPort === undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNatsNodeOnce(options);
    } catch (err) {
      if (!ownPorts || attempt >= 3) throw err;
    }
  }
}

async function startNatsNodeOnce(options: NatsNodeOptions): Promise<NatsNode> {
  const binary = options.binary ?? findNatsServer();
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
    const settings = options.cluster.settings === undefined ? '' : `, ${options.cluster.settings}`;
    lines.push(`cluster { name: "${options.cluster.name}", listen: "127.0.0.1:${options.cluster.port}", routes: [${routes}]${settings} }`);
  }
  if (options.extraConfig !== undefined) lines.push(options.extraConfig);
  writeFileSync(configFile, lines.join('\n') + '\n');
  const logFile = options.logFile ?? join(options.storeDir, `${serverName}.log`);
  // A panic goes to stderr, not to the log file: kept beside it, or a crash leaves no trace.
  const stderr = openSync(`${logFile}.stderr`, 'a');
  const child = spawn(binary, ['-c', configFile, '-l', logFile], {
    stdio: ['ignore', 'ignore', stderr],
    detached: options.ownProcessGroup === true,
    ...(options.env !== undefined ? { env: options.env } : {}),
  });
  closeSync(stderr);
  const exited = exitOf(child);
  const node: NatsNode = {
    url: `nats://127.0.0.1:${port}`,
    port,
    monitorPort,
    serverName,
    options: { ...options, port, monitorPort, serverName, logFile },
    process: child,
    async stop() {
      await endChild(child, exited, { killAfterMs: 5000 });
    },
    async kill() {
      await endChild(child, exited, { signal: 'SIGKILL' });
    },
  };
  try {
    await waitHealthy(node, options.cluster === undefined ? 'js-enabled-only=true' : '', child, options.healthTimeoutMs);
  } catch (err) {
    if (options.keepUnhealthy === true && running(child)) return node;
    await node.kill().catch(() => undefined);
    throw new Error(`${err instanceof Error ? err.message : String(err)}: ${logTail(logFile)}`, { cause: err });
  }
  return node;
}

/** Waits for /healthz; for a cluster node, only for the server itself (JetStream needs a quorum). */
export async function waitHealthy(node: Pick<NatsNode, 'monitorPort'>, query: string, child?: ChildProcess, timeoutMs = 15_000): Promise<void> {
  const url = `http://127.0.0.1:${node.monitorPort}/healthz${query === '' ? '' : `?${query}`}`;
  await waitUntil(() => httpOk(url), `nats-server on monitor port ${node.monitorPort} to become healthy`, {
    timeoutMs,
    intervalMs: 20,
    giveUp: () => (child !== undefined && !running(child) ? `nats-server exited during start-up (code ${String(child.exitCode)}); see its log file` : undefined),
  });
}

/** How long a node restarted into a cluster may take to catch up before its start counts as failed. */
export const RESTART_HEALTH_TIMEOUT_MS = 60_000;

export interface NatsCluster {
  nodes: NatsNode[];
  /** Comma-separated client URLs of every node, for NATS_URL. */
  urls: string;
  stop(): Promise<void>;
  /** Restarts a stopped or killed node with its original ports and store. */
  restart(index: number): Promise<NatsNode>;
}

/** Three (or n) JetStream nodes in one cluster on loopback, healthy with a meta leader. */
export function startNatsCluster(baseDir: string, size = 3, name = 'relay'): Promise<NatsCluster> {
  return onFreshPorts(baseDir, () => startClusterOnce(baseDir, size, name));
}

/**
 * Starts servers on ports asked for just before, trying again (on new ports, in an emptied `baseDir`)
 * up to three times: a free port is only free when asked, and another process can take it before
 * nats-server binds it (seen once in CI as a node exiting during start-up).
 */
export async function onFreshPorts<T>(baseDir: string, start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3) throw err;
      rmSync(baseDir, { recursive: true, force: true });
    }
  }
}

async function startClusterOnce(baseDir: string, size: number, name: string): Promise<NatsCluster> {
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
  const started = await Promise.allSettled(Array.from({ length: size }, (_, i) => startNatsNode(optionsFor(i))));
  const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    const failed = started.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await Promise.all(nodes.map((n) => waitHealthy(n, 'js-enabled-only=true', n.process, 30_000)));
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw err;
  }
  const cluster: NatsCluster = {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    async stop() {
      await Promise.all(cluster.nodes.map((n) => n.stop()));
    },
    async restart(index: number) {
      // A node back after a fault is healthy once its streams have caught up ("stream not current"
      // until then): 15 s ran out in a CI run of the readiness test, with the machine loaded.
      const node = await startNatsNode({ ...optionsFor(index), healthTimeoutMs: RESTART_HEALTH_TIMEOUT_MS });
      cluster.nodes[index] = node;
      return node;
    },
  };
  return cluster;
}

/** The last lines nats-server wrote, for the error that says it did not start. */
function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-3).join(' | ');
  } catch {
    return 'no log was written';
  }
}
