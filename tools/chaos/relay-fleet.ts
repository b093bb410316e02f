// The campaign's relay processes: gateways and ingresses, each its own OS process (`relay serve`),
// each reaching every NATS node through proxies of its own, so one relay can be cut off from NATS
// (or from one node) while the others are not. Every start and restart goes through `startRelay`,
// the one place that knows how a relay process starts.

import { startRelayProcess, waitReady, type RelayProcess } from '../relay-process.js';
import { freePort } from '../ports.js';
import { TcpProxy, type ProxyMode } from './tcp-proxy.js';

export type RelayRole = 'gateway' | 'ingress';

export interface RelaySlot {
  role: RelayRole;
  index: number;
  nodeId: string;
  port: number;
  url: string;
  /** proxies[n]: this relay's way to NATS node n. */
  proxies: TcpProxy[];
  /** The running process; null while killed. */
  proc: RelayProcess | null;
  paused: boolean;
  /** The campaign is stopping or killing it: its exit is no crash. */
  ending: boolean;
}

export class RelayFleet {
  readonly slots: RelaySlot[] = [];
  /** Told of a relay that exited on its own (with its log's last lines); it is started again. */
  onCrash: (nodeId: string, how: string) => void = () => undefined;
  private readonly env: Record<string, string>;
  private readonly natsPorts: number[];
  private readonly logDir: string;

  constructor(env: Record<string, string>, natsClientPorts: number[], logDir: string) {
    this.env = env;
    this.natsPorts = natsClientPorts;
    this.logDir = logDir;
  }

  of(role: RelayRole): RelaySlot[] {
    return this.slots.filter((s) => s.role === role);
  }

  slot(role: RelayRole, index: number): RelaySlot {
    const s = this.of(role)[index];
    if (s === undefined) throw new Error(`no ${role} ${index + 1}`);
    return s;
  }

  /** Adds a relay (its proxies and port) and starts it; resolves once it is ready. */
  async add(role: RelayRole): Promise<RelaySlot> {
    const index = this.of(role).length;
    const nodeId = `${role}-${index + 1}`;
    const proxies: TcpProxy[] = [];
    for (const [n, port] of this.natsPorts.entries()) {
      const p = new TcpProxy(`${nodeId}->n${n + 1}`, { host: '127.0.0.1', port });
      await p.listen();
      proxies.push(p);
    }
    const port = await freePort();
    const slot: RelaySlot = { role, index, nodeId, port, url: `http://127.0.0.1:${port}`, proxies, proc: null, paused: false, ending: false };
    this.slots.push(slot);
    await this.startRelay(slot);
    return slot;
  }

  /**
   * The one way a relay process starts (first start and every restart); rejects if it exits or is
   * not ready in time. Once up, an exit the campaign did not cause is a crash: reported, and the
   * process kept up as a supervisor would (keepUp).
   */
  private async startRelay(slot: RelaySlot): Promise<void> {
    const natsUrl = slot.proxies.map((p) => `nats://127.0.0.1:${p.port}`).join(',');
    slot.ending = false;
    const proc = await startRelayProcess(slot.role, { ...this.env, NATS_URL: natsUrl, PORT: String(slot.port), RELAY_NODE_ID: slot.nodeId }, { logDir: this.logDir, waitReady: false, appendLog: true });
    slot.proc = proc;
    let up = false;
    void proc.exited.then((code) => {
      if (slot.proc === proc) slot.proc = null;
      if (!up || slot.ending) return;
      slot.paused = false;
      this.onCrash(slot.nodeId, `exit code ${code}${proc.child.signalCode !== null ? ` (${proc.child.signalCode})` : ''}: ${tailOf(proc)}`);
      void this.keepUp(slot);
    });
    try {
      await waitReady(proc, 60_000);
    } catch (e) {
      // Not left running on the port the next start needs.
      await proc.kill();
      if (slot.proc === proc) slot.proc = null;
      throw new Error(`${String(e)}: ${tailOf(proc)}`, { cause: e });
    }
    up = true;
  }

  /** Starts the relay until it is up, pausing longer after each failed start (as systemd's Restart=always). */
  private async keepUp(slot: RelaySlot): Promise<void> {
    for (let n = 1; !slot.ending && slot.proc === null; n++) {
      try {
        await this.startRelay(slot);
        return;
      } catch (e) {
        this.onCrash(slot.nodeId, `could not be started (try ${n}): ${String(e).slice(0, 600)}`);
        await new Promise((r) => setTimeout(r, Math.min(1000 * n, 10_000)));
      }
    }
  }

  async kill(slot: RelaySlot): Promise<void> {
    if (slot.paused) this.resume(slot);
    slot.ending = true;
    await slot.proc?.kill();
    slot.proc = null;
  }

  /** After a kill: started once; if that fails, kept up in the background (the failure is a crash). */
  async restart(slot: RelaySlot): Promise<void> {
    if (slot.proc !== null) return;
    try {
      await this.startRelay(slot);
    } catch (e) {
      this.onCrash(slot.nodeId, `could not be started after the fault: ${String(e).slice(0, 600)}`);
      void this.keepUp(slot);
    }
  }

  pause(slot: RelaySlot): void {
    if (slot.proc === null || slot.paused) return;
    slot.proc.child.kill('SIGSTOP');
    slot.paused = true;
  }

  resume(slot: RelaySlot): void {
    if (slot.proc === null || !slot.paused) return;
    slot.proc.child.kill('SIGCONT');
    slot.paused = false;
  }

  /** The relay's links to NATS (every node's, or node `from`'s) in `mode`; pass heals. */
  link(slot: RelaySlot, from: 'all' | number, mode: ProxyMode): void {
    for (const [n, p] of slot.proxies.entries()) if (from === 'all' || from === n) p.set(mode);
  }

  /** The status /readyz answers (0: nothing answered within 3 s; the relay's own checks give up after 2 s). */
  async readiness(slot: RelaySlot): Promise<{ status: number; body: string }> {
    if (slot.proc === null || slot.paused) return { status: 0, body: slot.proc === null ? 'not running' : 'paused' };
    try {
      const res = await fetch(`${slot.url}/readyz`, { signal: AbortSignal.timeout(3000) });
      return { status: res.status, body: await res.text() };
    } catch (e) {
      return { status: 0, body: e instanceof Error ? e.message : String(e) };
    }
  }

  /** The Prometheus text of a relay, or null when it does not answer. */
  async metrics(slot: RelaySlot): Promise<string | null> {
    if (slot.proc === null || slot.paused) return null;
    try {
      const res = await fetch(`${slot.url}/metrics`, { signal: AbortSignal.timeout(2000) });
      return res.ok ? await res.text() : null;
    } catch {
      return null;
    }
  }

  async stop(): Promise<void> {
    for (const s of this.slots) {
      s.ending = true;
      this.resume(s);
    }
    await Promise.all(this.slots.map(async (s) => s.proc?.stop()));
    for (const s of this.slots) for (const p of s.proxies) await p.close();
  }
}

/** The last lines of a relay's log, for a crash report. */
function tailOf(proc: RelayProcess): string {
  return proc.log().trimEnd().split('\n').slice(-3).join(' | ').slice(0, 600);
}
