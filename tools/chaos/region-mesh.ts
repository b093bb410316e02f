// The region campaign's mesh, deployed as docs/REGIONS.md says an operator does: one nats-server per
// region joined by gateways whose every link passes through a proxy (tools/nats-super-cluster.ts),
// each region's servers loading the users of `relay nats-permissions --region R` with passwords of
// their own, `relay setup` once with REGIONS, a key, and in each region an ingress and a gateway as
// separate processes with REGION and the region's role credentials. A region is killed whole (its
// servers and its relays) and started again: its NATS first, then its relays.

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startSuperCluster, type SuperCluster } from '../nats-super-cluster.js';
import { startRelayProcess, waitReady, type RelayProcess } from '../relay-process.js';
import { freePort } from '../ports.js';
import { PERMISSION_ROLES, type PermissionRole } from '../../services/core/nats-permissions.js';
import { relayCommand } from './relay-command.js';

// Every role the region's permission file names a user for (relay nats-permissions --region R): each needs its password.
const ROLES = PERMISSION_ROLES;
type Role = PermissionRole;
export type RegionRole = 'ingress' | 'gateway';

/** Scopes that send and hear everything on a channel (as prepare-cluster.ts gives the one-log campaign). */
const SCOPES = 'irc.connection.establish,irc.messages.send,irc.messages.receive';

export interface RegionRelay {
  region: string;
  role: RegionRole;
  nodeId: string;
  url: string;
  port: number;
  proc: RelayProcess | null;
  /** The campaign is stopping or killing it: its exit is no crash. */
  ending: boolean;
}

export interface RegionMeshOptions {
  dir: string;
  logDir: string;
  regions: readonly string[];
  /** Settings every relay process and `relay setup` run with (NATS_URL and credentials are added). */
  env: Record<string, string>;
  natsServer?: string;
}

export class RegionMesh {
  readonly relays: RegionRelay[] = [];
  /** Told of a relay that exited on its own; it is started again. */
  onCrash: (who: string, how: string) => void = () => undefined;
  private readonly passwords = new Map<string, string>();

  private constructor(
    readonly sc: SuperCluster,
    readonly regions: readonly string[],
    private readonly o: RegionMeshOptions,
    readonly key: { clientId: string; clientSecret: string },
  ) {}

  static async start(o: RegionMeshOptions): Promise<RegionMesh> {
    const mesh = { ...o.env, REGIONS: o.regions.join(','), REGION_HOME: o.regions[0]! };
    const passwords = new Map<string, string>();
    for (const r of o.regions) for (const role of ROLES) passwords.set(`${r}/${role}`, `p${randomBytes(12).toString('hex')}`);
    const files = new Map<string, string>();
    for (const r of o.regions) files.set(r, await relayCommand(['nats-permissions', '--region', r], { ...mesh, NATS_URL: 'nats://127.0.0.1:1' }));
    const sc = await startSuperCluster(join(o.dir, 'nats'), o.regions, {
      serverConfig: (r) => ({
        extraConfig: files.get(r)!,
        env: { ...process.env, ...Object.fromEntries(ROLES.map((role) => [`RELAY_NATS_${role.toUpperCase()}_PASSWORD`, passwords.get(`${r}/${role}`)!])) },
      }),
      ...(o.natsServer !== undefined ? { binary: o.natsServer } : {}),
    });
    let m: RegionMesh | undefined;
    try {
      const as = (role: Role, r: string): Record<string, string> => ({ NATS_URL: sc.region(r).url, NATS_USER: role, NATS_PASSWORD: passwords.get(`${r}/${role}`)! });
      // Set up from the last region, the key written from the home region: any region will do.
      await relayCommand(['setup'], { ...mesh, ...as('cli', o.regions.at(-1)!) }, 180_000);
      const key = JSON.parse(await relayCommand(['keys', 'create', '--scopes', SCOPES, '--label', 'npm run chaos -- --regions', '--json'], { ...mesh, ...as('cli', o.regions[0]!) })) as { clientId: string; clientSecret: string };
      m = new RegionMesh(sc, o.regions, o, key);
      for (const [k, v] of passwords) m.passwords.set(k, v);
      for (const r of o.regions) {
        for (const role of ['ingress', 'gateway'] as const) {
          const port = await freePort();
          m.relays.push({ region: r, role, nodeId: `${role}-${r}`, port, url: `http://127.0.0.1:${port}`, proc: null, ending: false });
        }
      }
      const started = m;
      await Promise.all(started.relays.map((s) => started.startRelay(s)));
      return started;
    } catch (e) {
      // Those relays that did start are not left behind the failed start.
      if (m !== undefined) await m.stop();
      else await sc.stop();
      throw e;
    }
  }

  /** The credentials of `role` in region `r` (the checker reads each region's log as its gateway does). */
  credentials(role: Role, r: string): { servers: string; user: string; pass: string } {
    return { servers: this.sc.region(r).url, user: role, pass: this.passwords.get(`${r}/${role}`)! };
  }

  relay(region: string, role: RegionRole): RegionRelay {
    const s = this.relays.find((x) => x.region === region && x.role === role);
    if (s === undefined) throw new Error(`no ${role} in ${region}`);
    return s;
  }

  /** Starts a relay and waits until it is ready; an exit the campaign did not cause is then a crash. */
  private async startRelay(slot: RegionRelay): Promise<void> {
    const c = this.credentials(slot.role, slot.region);
    const env = { ...this.o.env, REGIONS: this.regions.join(','), REGION_HOME: this.regions[0]!, REGION: slot.region, NATS_URL: c.servers, NATS_USER: c.user, NATS_PASSWORD: c.pass, PORT: String(slot.port), RELAY_NODE_ID: slot.nodeId };
    slot.ending = false;
    const proc = await startRelayProcess(slot.role, env, { logDir: this.o.logDir, waitReady: false, appendLog: true });
    slot.proc = proc;
    let up = false;
    void proc.exited.then((code) => {
      if (slot.proc === proc) slot.proc = null;
      if (!up || slot.ending) return;
      this.onCrash(slot.nodeId, `exit code ${code}: ${proc.log().trimEnd().split('\n').slice(-3).join(' | ').slice(0, 600)}`);
      void this.keepUp(slot);
    });
    try {
      await waitReady(proc, 90_000);
    } catch (e) {
      await proc.kill();
      if (slot.proc === proc) slot.proc = null;
      throw e;
    }
    up = true;
  }

  /** Starts the relay until it is up, pausing longer after each failed start (as a supervisor would). */
  private async keepUp(slot: RegionRelay): Promise<void> {
    for (let n = 1; !slot.ending && slot.proc === null; n++) {
      try {
        await this.startRelay(slot);
        return;
      } catch (e) {
        this.onCrash(slot.nodeId, `could not be started (try ${n}): ${String(e).slice(0, 400)}`);
        await new Promise((r) => setTimeout(r, Math.min(1000 * n, 10_000)));
      }
    }
  }

  /** The region lost whole: its relays and its servers killed (SIGKILL). */
  async killRegion(region: string): Promise<void> {
    const mine = this.relays.filter((s) => s.region === region);
    for (const s of mine) s.ending = true;
    await Promise.all(mine.map(async (s) => s.proc?.kill()));
    for (const s of mine) s.proc = null;
    await this.sc.kill(region);
  }

  /**
   * The region's relays alone SIGKILLed and started again (its servers untouched: it may be cut
   * off), both at once; resolves once both are ready, or once a start failed (then kept trying).
   */
  async restartRelays(region: string, note: (text: string) => void): Promise<void> {
    const mine = this.relays.filter((s) => s.region === region);
    for (const s of mine) s.ending = true;
    await Promise.all(mine.map(async (s) => s.proc?.kill()));
    for (const s of mine) s.proc = null;
    await Promise.all(
      mine.map((s) =>
        this.startRelay(s).catch((e: unknown) => {
          note(`${s.nodeId} could not be started: ${String(e).slice(0, 200)}`);
          this.onCrash(s.nodeId, `could not be started after its kill: ${String(e).slice(0, 400)}`);
          void this.keepUp(s);
        }),
      ),
    );
  }

  /** The region's ingress stopped where it is (SIGSTOP) or let run on (SIGCONT); its sockets stay open. */
  signalIngress(region: string, signal: 'SIGSTOP' | 'SIGCONT'): void {
    const ingress = this.relays.find((s) => s.region === region && s.role === 'ingress');
    if (ingress === undefined || ingress.proc === null) throw new Error(`${region}'s ingress is not running`);
    ingress.proc.child.kill(signal);
  }

  /** Its servers started with their stores, then (once its gateways are up) its relays. */
  async restartRegion(region: string, note: (text: string) => void): Promise<void> {
    await this.sc.restart(region);
    await this.sc.connected(60_000).catch((e: unknown) => note(`gateways not all up 60 s after the restart: ${String(e).slice(0, 200)}`));
    for (const s of this.relays.filter((x) => x.region === region)) {
      await this.startRelay(s).catch((e: unknown) => {
        this.onCrash(s.nodeId, `could not be started after its region's restart: ${String(e).slice(0, 400)}`);
        void this.keepUp(s);
      });
    }
  }

  /** The status /readyz answers (0: nothing within 3 s). */
  async readiness(slot: RegionRelay): Promise<{ status: number; body: string }> {
    if (slot.proc === null) return { status: 0, body: 'not running' };
    try {
      const res = await fetch(`${slot.url}/readyz`, { signal: AbortSignal.timeout(3000) });
      return { status: res.status, body: await res.text() };
    } catch (e) {
      return { status: 0, body: e instanceof Error ? e.message : String(e) };
    }
  }

  async stop(): Promise<void> {
    for (const s of this.relays) s.ending = true;
    // A paused ingress (`ingress pause`) would never act on its SIGTERM.
    for (const s of this.relays) s.proc?.child.kill('SIGCONT');
    await Promise.all(this.relays.map(async (s) => s.proc?.stop()));
    await this.sc.stop();
  }
}
