// Regions on loopback: one NATS cluster per region (one node each), joined by gateways into one
// super-cluster, for the region tests and the mesh script (docs/REGIONS.md).
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
import { startNatsNode, type NatsNode, type NatsNodeOptions } from './nats-launcher.js';
import { httpJson, waitUntil } from './poll.js';
import { freePort } from './ports.js';

export interface Region {
  readonly name: string;
  /** Null while the region is killed. */
  node: NatsNode | null;
  /** Client URL of the region's server (the same after a restart). */
  readonly url: string;
  readonly monitorPort: number;
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
  /** Gateway connections refused for coming from the wrong region (a test can assert none slipped). */
  readonly strayDials: number;
  /** SIGKILL the region's server: the whole region lost. */
  kill(name: string): Promise<void>;
  /** Start a killed region again with its ports and store. */
  restart(name: string): Promise<void>;
  /** Until every region has an outbound gateway connection to every other one. */
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
export async function startSuperCluster(baseDir: string, names: readonly string[] = ['a', 'b', 'c']): Promise<SuperCluster> {
  const ports = new Map<string, Ports>();
  for (const name of names) ports.set(name, { client: await freePort(), monitor: await freePort(), cluster: await freePort(), gateway: await freePort() });
  const portsOf = (name: string): Ports => ports.get(name)!;
  const dead = await nowhere();
  const proxies = new Map<string, TcpProxy>();
  const key = (from: string, to: string): string => `${from}>${to}`;
  for (const from of names) {
    for (const to of names) {
      if (from === to) continue;
      const proxy = new TcpProxy(key(from, to), { host: '127.0.0.1', port: portsOf(to).gateway }, (sent) => {
        const dialer = gatewayNameOf(sent);
        return dialer === undefined ? undefined : dialer === from;
      });
      await proxy.listen();
      proxies.set(key(from, to), proxy);
    }
  }

  const optionsOf = (name: string): NatsNodeOptions => {
    const p = portsOf(name);
    const others = names
      .filter((o) => o !== name)
      .map((o) => `{ name: "${o}", urls: ["nats://127.0.0.1:${proxies.get(key(name, o))!.port}"] }`)
      .join(', ');
    return {
      storeDir: join(baseDir, name),
      port: p.client,
      monitorPort: p.monitor,
      serverName: `${name}-n1`,
      // A one-node region still needs a cluster block naming itself and a route (to itself): 2.9
      // refuses clustered JetStream without configured routes.
      cluster: { name, port: p.cluster, routes: [p.cluster] },
      extraConfig: `gateway { name: "${name}", listen: "127.0.0.1:${p.gateway}", advertise: "127.0.0.1:${dead.port}", gateways: [${others}] }`,
      healthTimeoutMs: 30_000,
    };
  };

  const regions: Region[] = names.map((name) => ({ name, node: null, url: `nats://127.0.0.1:${portsOf(name).client}`, monitorPort: portsOf(name).monitor }));
  const regionOf = (name: string): Region => {
    const region = regions.find((r) => r.name === name);
    if (region === undefined) throw new Error(`no region ${name}`);
    return region;
  };
  const started = await Promise.allSettled(regions.map(async (r) => (r.node = await startNatsNode(optionsOf(r.name)))));

  const cluster: SuperCluster = {
    regions,
    region: regionOf,
    setLink(a, b, mode) {
      proxies.get(key(a, b))!.set(mode);
      proxies.get(key(b, a))!.set(mode);
    },
    isolate(name, mode = { kind: 'cut' }) {
      for (const other of names) if (other !== name) cluster.setLink(name, other, mode);
    },
    heal() {
      for (const proxy of proxies.values()) proxy.heal();
    },
    get strayDials() {
      return [...proxies.values()].reduce((sum, p) => sum + p.refused, 0);
    },
    async kill(name) {
      const region = regionOf(name);
      await region.node?.kill();
      region.node = null;
    },
    async restart(name) {
      const region = regionOf(name);
      if (region.node !== null) throw new Error(`region ${name} is running`);
      region.node = await startNatsNode(optionsOf(name));
    },
    async connected(timeoutMs = 30_000) {
      await waitUntil(async () => (await Promise.all(regions.map((r) => gatewaysUp(r, names)))).every(Boolean), 'every region to reach every other through its gateway', { timeoutMs, intervalMs: 50 });
    },
    async stop() {
      await Promise.all(regions.flatMap((r) => (r.node === null ? [] : [r.node.stop()])));
      await Promise.all([...proxies.values(), dead].map((p) => p.close()));
    },
  };
  try {
    const failed = started.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await cluster.connected();
    await waitUntil(() => metaLeaderKnown(regions), "JetStream's meta group to elect a leader across the regions", { timeoutMs: 30_000, intervalMs: 50 });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

async function gatewaysUp(region: Region, names: readonly string[]): Promise<boolean> {
  if (region.node === null) return true;
  const z = await httpJson<{ outbound_gateways?: Record<string, unknown> }>(`http://127.0.0.1:${region.monitorPort}/gatewayz`);
  const outbound = Object.keys(z?.outbound_gateways ?? {});
  return names.every((n) => n === region.name || outbound.includes(n));
}

async function metaLeaderKnown(regions: readonly Region[]): Promise<boolean> {
  for (const r of regions) {
    const z = await httpJson<{ meta_cluster?: { leader?: string } }>(`http://127.0.0.1:${r.monitorPort}/jsz`);
    if (z?.meta_cluster?.leader === undefined || z.meta_cluster.leader === '') return false;
  }
  return true;
}
