// The campaign's NATS cluster: three JetStream nodes whose cluster routes run through the campaign's
// proxies (node i reaches node j only through proxy [i][j]), each store on a disk of its own that
// can be filled. Routes are not gossiped around the proxies (each node advertises a dead address),
// nor are client addresses (no_advertise), so a partition is exactly what the proxies make it.

import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { startNatsNode, type NatsNode, type NatsNodeOptions } from '../nats-launcher.js';
import { freePort } from '../ports.js';
import { FILLER, StoreDisk } from './store-disk.js';
import { TcpProxy, type ProxyMode } from './tcp-proxy.js';

/**
 * Each store's disk. JetStream takes 75 % of it for itself and reserves the log's and the
 * Idempotency-Key bucket's byte bounds (campaign.ts sets them to fit), so a half-hour run (a log of
 * about 30 MB) has room; filled, it is full.
 */
const STORE_BYTES = 512 * 1024 * 1024;
const MONITOR_TIMEOUT_MS = 1000;
/** How long a restarted node may take to say healthy (caught up) before the campaign gives up on it, as a supervisor would wait. */
const RESTART_PATIENCE_MS = 120_000;

export interface NodeSlot {
  index: number;
  name: string;
  clientPort: number;
  monitorPort: number;
  options: NatsNodeOptions;
  /** The running process; null while killed. */
  node: NatsNode | null;
  paused: boolean;
  /** Its store's own disk; null when none could be mounted (then no disk-full fault). */
  disk: StoreDisk | null;
  /** The campaign is stopping or killing it: its exit is no crash. */
  ending: boolean;
}

/** A process that exited without being told to, with how it ended. */
export type CrashListener = (name: string, how: string) => void;

export class ChaosNats {
  readonly slots: NodeSlot[];
  /** routes[i][j]: what node i dials to reach node j. */
  private readonly routes: Array<Array<TcpProxy | null>>;
  /** Why the stores have no disk of their own, when they have not. */
  readonly diskProblem: string | null;
  /** Told of a node that exited on its own (a panic, an abort); it is started again. */
  onCrash: CrashListener = () => undefined;

  private constructor(slots: NodeSlot[], routes: Array<Array<TcpProxy | null>>, diskProblem: string | null) {
    this.slots = slots;
    this.routes = routes;
    this.diskProblem = diskProblem;
  }

  /**
   * `binary`: the nats-server to run (default: the machine's). A port found free can be taken by
   * another process before nats-server binds it (a busy shared machine): the start is tried again
   * on new ports, and what a failed try set up (nodes, proxies, mounts) is taken down first.
   */
  static async start(baseDir: string, logDir: string, binary?: string, size = 3): Promise<ChaosNats> {
    for (let attempt = 1; ; attempt++) {
      const made = await ChaosNats.make(baseDir, logDir, binary, size);
      try {
        await Promise.all(made.slots.map((s) => made.restart(s.index)));
        return made;
      } catch (err) {
        await made.stop();
        if (attempt >= 3) throw err;
      }
    }
  }

  private static async make(baseDir: string, logDir: string, binary: string | undefined, size: number): Promise<ChaosNats> {
    const clusterPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const dead = await freePort();
    const routes: Array<Array<TcpProxy | null>> = [];
    for (let i = 0; i < size; i++) {
      routes.push([]);
      for (let j = 0; j < size; j++) {
        const p = i === j ? null : new TcpProxy(`route n${i + 1}->n${j + 1}`, { host: '127.0.0.1', port: clusterPorts[j]! });
        if (p !== null) await p.listen();
        routes[i]!.push(p);
      }
    }
    let diskProblem: string | null = null;
    const slots: NodeSlot[] = [];
    for (let i = 0; i < size; i++) {
      const storeDir = join(baseDir, `n${i + 1}`);
      const disk = StoreDisk.mount(storeDir, STORE_BYTES);
      if (typeof disk === 'string') diskProblem = disk;
      const options: NatsNodeOptions = {
        storeDir,
        port: await freePort(),
        monitorPort: await freePort(),
        serverName: `n${i + 1}`,
        logFile: join(logDir, `nats-n${i + 1}.log`),
        ...(binary !== undefined ? { binary } : {}),
        healthTimeoutMs: RESTART_PATIENCE_MS,
        keepUnhealthy: true,
        cluster: {
          name: 'chaos',
          port: clusterPorts[i]!,
          routes: routes[i]!.flatMap((p) => (p === null ? [] : [p.port])),
          settings: `no_advertise: true, advertise: "127.0.0.1:${dead}"`,
        },
      };
      slots.push({ index: i, name: `n${i + 1}`, clientPort: options.port!, monitorPort: options.monitorPort!, options, node: null, paused: false, disk: typeof disk === 'string' ? null : disk, ending: false });
    }
    return new ChaosNats(slots, routes, diskProblem);
  }

  /** The campaign's own way in: straight to every node, around the proxies. */
  get directUrls(): string {
    return this.slots.map((s) => `nats://127.0.0.1:${s.clientPort}`).join(',');
  }

  pid(i: number): number | undefined {
    return this.slots[i]!.node?.process.pid;
  }

  async kill(i: number): Promise<void> {
    const s = this.slots[i]!;
    if (s.paused) this.resume(i);
    s.ending = true;
    await s.node?.kill();
    s.node = null;
  }

  /** Starts the node again on its ports and store (after a kill), once it answers. */
  async restart(i: number): Promise<void> {
    const s = this.slots[i]!;
    if (s.node !== null) return;
    s.ending = false;
    const node = await startNatsNode(s.options);
    s.node = node;
    node.process.once('exit', (code, signal) => {
      if (s.ending || s.node !== node) return;
      s.node = null;
      s.paused = false;
      this.onCrash(s.name, signal !== null ? `signal ${signal}` : `exit code ${code}`);
      void this.restart(i).catch((e: unknown) => this.onCrash(s.name, `and could not be started again: ${String(e)}`));
    });
  }

  pause(i: number): void {
    const s = this.slots[i]!;
    if (s.node === null || s.paused) return;
    s.node.process.kill('SIGSTOP');
    s.paused = true;
  }

  resume(i: number): void {
    const s = this.slots[i]!;
    if (s.node === null || !s.paused) return;
    s.node.process.kill('SIGCONT');
    s.paused = false;
  }

  /** Node i's routes to and from every other node, in `mode` (pass heals). */
  isolate(i: number, mode: ProxyMode): void {
    for (let j = 0; j < this.slots.length; j++) {
      this.routes[i]![j]?.set(mode);
      this.routes[j]![i]?.set(mode);
    }
  }

  /** Reads a node's monitoring page; null when it does not answer promptly (paused, killed). */
  async monitor<T>(i: number, path: string): Promise<T | null> {
    const s = this.slots[i]!;
    if (s.node === null || s.paused) return null;
    try {
      const res = await fetch(`http://127.0.0.1:${s.monitorPort}${path}`, { signal: AbortSignal.timeout(MONITOR_TIMEOUT_MS) });
      return res.ok ? ((await res.json()) as T) : null;
    } catch {
      return null;
    }
  }

  /**
   * What the node says of its JetStream, asked a few times a second apart: 'enabled', 'disabled'
   * (it turns JetStream off on some store errors, a full disk among them) or 'silent' (no answer).
   */
  async jetStreamState(i: number, tries = 5): Promise<'enabled' | 'disabled' | 'silent'> {
    let said: 'disabled' | 'silent' = 'silent';
    for (let t = 0; t < tries; t++) {
      const jsz = await this.monitor<Jsz & { disabled?: boolean }>(i, '/jsz');
      if (jsz !== null && jsz.disabled !== true) return 'enabled';
      if (jsz !== null) said = 'disabled';
      await new Promise((r) => setTimeout(r, 1000));
    }
    return said;
  }

  /**
   * Index of the node leading `stream`: one that answers and says it leads it (a follower keeps
   * naming a paused or dead leader until it elects another). Null when no node does.
   */
  async streamLeader(stream: string): Promise<number | null> {
    const views = await Promise.all(this.slots.map((s) => this.monitor<Jsz>(s.index, '/jsz?accounts=true&streams=true')));
    const i = views.findIndex((jsz, i) => jsz?.account_details?.some((a) => (a.stream_detail ?? []).some((d) => d.name === stream && d.cluster?.leader === this.slots[i]!.name)) === true);
    return i < 0 ? null : i;
  }

  /** Index of the JetStream meta leader: a node that answers and says it is. Null when none does. */
  async metaLeader(): Promise<number | null> {
    const views = await Promise.all(this.slots.map((s) => this.monitor<Jsz>(s.index, '/jsz')));
    const i = views.findIndex((jsz, i) => jsz?.meta_cluster?.leader === this.slots[i]!.name);
    return i < 0 ? null : i;
  }

  /** Copies every node's store (without the filler) to `dir`/<node>. */
  copyStores(dir: string): void {
    for (const s of this.slots) cpSync(s.options.storeDir, join(dir, s.name), { recursive: true, filter: (src) => !src.endsWith(FILLER) });
  }

  async stop(): Promise<void> {
    for (const s of this.slots) {
      s.ending = true;
      this.resume(s.index);
    }
    await Promise.all(this.slots.map(async (s) => s.node?.stop()));
    for (const row of this.routes) for (const p of row) await p?.close();
    for (const s of this.slots) s.disk?.unmount();
  }
}

interface Jsz {
  meta_cluster?: { leader?: string };
  account_details?: Array<{ stream_detail?: Array<{ name: string; cluster?: { leader?: string } }> }>;
}
