// Regions on loopback: one NATS cluster per region (one server each for tests, three for benches),
// joined by gateways into one super-cluster, for the region tests and benches (docs/REGIONS.md).
//
// Every gateway dial from region X to region Y goes through a proxy of its own (tools/chaos/tcp-proxy.ts),
// so a test can cut, blackhole or slow the link between two regions, or cut a region off. Two ways
// around the proxies are closed:
// - a server advertises its gateway address to the regions that dial it, and they would use it on a
//   reconnect; each advertises a listener that resets every connection instead;
// - gateways gossip the addresses they know (X learns the one Z uses for Y); each proxy admits only
//   the region it was placed for, read from the gateway's CONNECT.

import { join } from 'node:path';
import { TcpProxy, type ProxyMode } from './chaos/tcp-proxy.js';
import { onFreshPorts, RESTART_HEALTH_TIMEOUT_MS, startNatsNode, type NatsNode, type NatsNodeOptions } from './nats-launcher.js';
import { httpJson, waitUntil } from './poll.js';
import { freePort } from './ports.js';

export interface Region {
  readonly name: string;
  /** Its servers; empty while the region is killed. */
  nodes: NatsNode[];
  /** Client URLs of the region's servers, comma-separated (the same after a restart). */
  readonly url: string;
}

export interface SuperClusterOptions {
  /** Servers per region: 1 for tests, 3 for a region that survives losing one (the benches). */
  nodesPerRegion?: number;
  /** More of each server's configuration (a region's users), and the environment it reads. */
  serverConfig?: (region: string) => { extraConfig: string; env?: NodeJS.ProcessEnv };
  /** The nats-server binary (the fault campaign's --nats-server); the machine's otherwise. */
  binary?: string;
}

export interface SuperCluster {
  readonly regions: readonly Region[];
  region(name: string): Region;
  /** Both directions of the link between two regions. */
  setLink(a: string, b: string, mode: ProxyMode): void;
  /** Every link of one region. */
  isolate(name: string, mode?: ProxyMode): void;
  /** Every link back to passing. */
  heal(): void;
  /** SIGKILL every server of the region: the whole region lost. */
  kill(name: string): Promise<void>;
  /** SIGTERM every server of the region: a region shut down, its servers saying goodbye. */
  shutDown(name: string): Promise<void>;
  /** Start a killed or stopped region again with its ports and stores. */
  restart(name: string): Promise<void>;
  /** Until every server has an outbound gateway connection to every other region. */
  connected(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

interface Ports {
  client: number;
  monitor: number;
  cluster: number;
  gateway: number;
}

/** A listener that resets every connection: what each server advertises as its gateway address. */
async function nowhere(): Promise<TcpProxy> {
  const proxy = new TcpProxy('nowhere', { host: '127.0.0.1', port: 1 });
  proxy.set({ kind: 'cut' });
  await proxy.listen();
  return proxy;
}

function gatewayNameOf(sent: string): string | undefined {
  return /"gateway":"([^"]+)"/.exec(sent)?.[1];
}

/** Three (or the given) regions, healthy, every gateway connected, JetStream's meta group formed. */
export function startSuperCluster(baseDir: string, names: readonly string[] = ['a', 'b', 'c'], options: SuperClusterOptions = {}): Promise<SuperCluster> {
  return onFreshPorts(baseDir, () => startOnce(baseDir, names, options));
}

async function startOnce(baseDir: string, names: readonly string[], options: SuperClusterOptions): Promise<SuperCluster> {
  const size = options.nodesPerRegion ?? 1;
  const ports = new Map<string, Ports[]>();
  for (const name of names) {
    const nodes: Ports[] = [];
    for (let i = 0; i < size; i++) nodes.push({ client: await freePort(), monitor: await freePort(), cluster: await freePort(), gateway: await freePort() });
    ports.set(name, nodes);
  }
  const portsOf = (name: string): Ports[] => ports.get(name)!;
  const dead = await nowhere();
  // One proxy per dialing region and server dialed: cutting a link cuts every path between the two.
  const proxies = new Map<string, TcpProxy[]>();
  const key = (from: string, to: string): string => `${from}>${to}`;
  for (const from of names) {
    for (const to of names) {
      if (from === to) continue;
      const toward: TcpProxy[] = [];
      for (const [i, p] of portsOf(to).entries()) {
        const proxy = new TcpProxy(`${key(from, to)}${i + 1}`, { host: '127.0.0.1', port: p.gateway }, (sent) => {
          const dialer = gatewayNameOf(sent);
          return dialer === undefined ? undefined : dialer === from;
        });
        await proxy.listen();
        toward.push(proxy);
      }
      proxies.set(key(from, to), toward);
    }
  }
  const allProxies = (): TcpProxy[] => [...proxies.values()].flat();

  const optionsOf = (name: string, i: number): NatsNodeOptions => {
    const p = portsOf(name)[i]!;
    const others = names
      .filter((o) => o !== name)
      .map((o) => `{ name: "${o}", urls: [${proxies.get(key(name, o))!.map((x) => `"nats://127.0.0.1:${x.port}"`).join(', ')}] }`)
      .join(', ');
    const peers = portsOf(name).map((q) => q.cluster);
    const more = options.serverConfig?.(name);
    return {
      storeDir: join(baseDir, name, `n${i + 1}`),
      port: p.client,
      monitorPort: p.monitor,
      serverName: `${name}-n${i + 1}`,
      // A one-server region still needs a cluster block naming itself and a route (to itself): 2.9
      // refuses clustered JetStream without configured routes.
      cluster: { name, port: p.cluster, routes: size === 1 ? peers : peers.filter((c) => c !== p.cluster) },
      extraConfig: [`gateway { name: "${name}", listen: "127.0.0.1:${p.gateway}", advertise: "127.0.0.1:${dead.port}", gateways: [${others}] }`, more?.extraConfig ?? ''].join('\n'),
      ...(more?.env !== undefined ? { env: more.env } : {}),
      ...(options.binary !== undefined ? { binary: options.binary } : {}),
      // Every server of every region starts at once: each is healthy once the meta group has formed.
      healthTimeoutMs: 30_000,
    };
  };
  // All of a region's servers, or none: those that started are stopped when one did not.
  const startRegion = async (name: string, healthTimeoutMs?: number): Promise<NatsNode[]> => {
    const started = await Promise.allSettled(portsOf(name).map((_, i) => startNatsNode({ ...optionsOf(name, i), ...(healthTimeoutMs !== undefined ? { healthTimeoutMs } : {}) })));
    const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed === undefined) return nodes;
    await Promise.all(nodes.map((n) => n.kill()));
    throw failed.reason;
  };

  const regions: Region[] = names.map((name) => ({
    name,
    nodes: [],
    url: portsOf(name).map((p) => `nats://127.0.0.1:${p.client}`).join(','),
  }));
  const regionOf = (name: string): Region => {
    const region = regions.find((r) => r.name === name);
    if (region === undefined) throw new Error(`no region ${name}`);
    return region;
  };
  const started = await Promise.allSettled(regions.map(async (r) => (r.nodes = await startRegion(r.name))));

  const cluster: SuperCluster = {
    regions,
    region: regionOf,
    setLink(a, b, mode) {
      for (const proxy of [...proxies.get(key(a, b))!, ...proxies.get(key(b, a))!]) proxy.set(mode);
    },
    isolate(name, mode = { kind: 'cut' }) {
      for (const other of names) if (other !== name) cluster.setLink(name, other, mode);
    },
    heal() {
      for (const proxy of allProxies()) proxy.heal();
    },
    async kill(name) {
      const region = regionOf(name);
      await Promise.all(region.nodes.map((n) => n.kill()));
      region.nodes = [];
    },
    async shutDown(name) {
      const region = regionOf(name);
      await Promise.all(region.nodes.map((n) => n.stop()));
      region.nodes = [];
    },
    async restart(name) {
      const region = regionOf(name);
      if (region.nodes.length > 0) throw new Error(`region ${name} is running`);
      region.nodes = await startRegion(name, RESTART_HEALTH_TIMEOUT_MS);
    },
    async connected(timeoutMs = 30_000) {
      await waitUntil(async () => (await Promise.all(regions.map((r) => gatewaysUp(r, names)))).every(Boolean), 'every region to reach every other through its gateway', { timeoutMs, intervalMs: 50 });
    },
    async stop() {
      await Promise.all(regions.flatMap((r) => r.nodes.map((n) => n.stop())));
      await Promise.all([...allProxies(), dead].map((p) => p.close()));
    },
  };
  try {
    const failed = started.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await cluster.connected();
    await waitUntil(() => metaGroupFormed(regions), "JetStream's meta group to elect a leader across the regions and see every server current", { timeoutMs: 30_000, intervalMs: 50 });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

async function gatewaysUp(region: Region, names: readonly string[]): Promise<boolean> {
  for (const node of region.nodes) {
    const z = await httpJson<{ outbound_gateways?: Record<string, unknown> }>(`http://127.0.0.1:${node.monitorPort}/gatewayz`);
    const outbound = Object.keys(z?.outbound_gateways ?? {});
    if (!names.every((n) => n === region.name || outbound.includes(n))) return false;
  }
  return true;
}

interface MetaCluster {
  leader?: string;
  replicas?: Array<{ name: string; current?: boolean; offline?: boolean }>;
}

/**
 * Every server knows the meta leader, and the leader sees every other server as a current peer: a
 * stream placed in a region whose servers the leader does not see yet is refused ("no suitable peers
 * for placement, peer offline"; seen in CI right after a start).
 */
async function metaGroupFormed(regions: readonly Region[]): Promise<boolean> {
  const nodes = regions.flatMap((r) => r.nodes);
  let leaderView: MetaCluster | undefined;
  for (const node of nodes) {
    const z = await httpJson<{ meta_cluster?: MetaCluster }>(`http://127.0.0.1:${node.monitorPort}/jsz`);
    const meta = z?.meta_cluster;
    if (meta?.leader === undefined || meta.leader === '') return false;
    if (meta.leader === node.options.serverName) leaderView = meta;
  }
  const peers = leaderView?.replicas ?? [];
  return leaderView !== undefined && peers.length === nodes.length - 1 && peers.every((p) => p.current === true && p.offline !== true);
}
