// The nemesis: plays the schedule against the mesh, one fault at a time, each started, held for its
// duration and healed, with both moments in the history. Targets named by role ("the log's leader",
// "a minority") are resolved when the fault starts, from what the nodes say then.

import type { History } from './history.js';
import type { ChaosNats } from './nats-nodes.js';
import type { Random } from './random.js';
import type { RelayFleet } from './relay-fleet.js';
import { describeFault, kindOf, type Fault, type FaultKind, type LinkFault } from './schedule.js';
import type { ProxyMode } from './tcp-proxy.js';
import type { FaultWindow } from './records.js';

export interface ExecutedFault extends FaultWindow {
  kind: FaultKind;
  text: string;
  /** What the nemesis found or had to do (a node whose JetStream stopped on a full disk, restarted). */
  notes: string[];
}

export interface NemesisDeps {
  nats: ChaosNats;
  fleet: RelayFleet;
  history: History;
  random: Random;
  /** A gateway was just paused or cut off: accounts on it open streams on another gateway (its claims taken over). */
  takeOver: (gatewayNodeId: string) => void;
}

function mode(link: LinkFault, delayMs: number): ProxyMode {
  return link === 'slow' ? { kind: 'slow', delayMs } : { kind: link };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

export class Nemesis {
  readonly executed: ExecutedFault[] = [];
  private readonly d: NemesisDeps;
  private stopped = false;

  constructor(deps: NemesisDeps) {
    this.d = deps;
  }

  /** Plays the faults in order until the schedule or `runMs` ends; every fault started is healed. */
  async run(faults: readonly Fault[], runMs: number): Promise<void> {
    const { history } = this.d;
    for (const f of faults) {
      if (this.stopped) return;
      await sleep(f.at - history.now());
      if (this.stopped || history.now() + f.durationMs > runMs) return;
      const start = history.now();
      const done: ExecutedFault = { id: f.id, start, end: start, kind: kindOf(f.spec), text: describeFault(f), notes: [] };
      this.executed.push(done);
      history.record('fault', `#${f.id}`, `start ${done.text}`);
      let heal: () => Promise<void>;
      try {
        heal = await this.begin(f, done);
      } catch (e) {
        done.notes.push(`could not start: ${e instanceof Error ? e.message : String(e)}`);
        heal = async () => undefined;
      }
      history.record('fault', `#${f.id}`, `${done.text} under way${done.notes.length > 0 ? `: ${done.notes.join('; ')}` : ''}`);
      await sleep(start + f.durationMs - history.now());
      // A heal that fails (a node that cannot start) is the run's finding, not its end: the
      // supervisors keep trying, the probes and the checker report what it left behind.
      await heal().catch((e: unknown) => void done.notes.push(`could not heal: ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`));
      done.end = history.now();
      history.record('fault', `#${f.id}`, `healed ${done.text}${done.notes.length > 0 ? ` (${done.notes.join('; ')})` : ''}`);
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /** Starts a fault; resolves with what heals it. */
  private async begin(f: Fault, done: ExecutedFault): Promise<() => Promise<void>> {
    const { nats, fleet, random } = this.d;
    const s = f.spec;
    const note = (text: string): void => void done.notes.push(text);
    switch (s.kind) {
      case 'kill': {
        if (s.role === 'nats') {
          await nats.kill(s.index);
          return () => nats.restart(s.index);
        }
        const slot = fleet.slot(s.role, s.index);
        await fleet.kill(slot);
        return () => fleet.restart(slot);
      }
      case 'pause-nats': {
        const leader = (await nats.streamLeader('RELAY')) ?? random.int(0, nats.slots.length - 1);
        const others = nats.slots.map((n) => n.index).filter((i) => i !== leader);
        const victims = s.which === 'leader' ? [leader] : s.which === 'minority' ? [random.pick(others)] : [leader, random.pick(others)];
        note(`paused ${victims.map((i) => `n${i + 1}`).join(' and ')} (log leader n${leader + 1})`);
        for (const i of victims) nats.pause(i);
        return async () => victims.forEach((i) => nats.resume(i));
      }
      case 'pause-gateway': {
        const slot = fleet.slot('gateway', s.index);
        fleet.pause(slot);
        this.d.takeOver(slot.nodeId);
        return async () => fleet.resume(slot);
      }
      case 'partition-nats': {
        const node = s.node === 'leader' ? ((await nats.streamLeader('RELAY')) ?? 0) : s.node;
        if (s.node === 'leader') note(`the log leader is n${node + 1}`);
        nats.isolate(node, mode(s.link, s.delayMs));
        return async () => nats.isolate(node, { kind: 'pass' });
      }
      case 'partition-relay': {
        const slot = fleet.slot(s.role, s.index);
        fleet.link(slot, s.from, mode(s.link, s.delayMs));
        // A gateway cut off from NATS hears no eviction: its accounts move elsewhere meanwhile.
        if (s.role === 'gateway' && s.from === 'all' && s.link !== 'slow') this.d.takeOver(slot.nodeId);
        return async () => fleet.link(slot, s.from, { kind: 'pass' });
      }
      case 'disk-full': {
        const disk = nats.slots[s.node]!.disk;
        if (disk === null) {
          note(`skipped: ${nats.diskProblem ?? 'no disk of its own'}`);
          return async () => undefined;
        }
        note(`filled n${s.node + 1}'s store with ${(disk.fill() / 2 ** 20).toFixed(0)} MiB`);
        return async () => {
          disk.empty();
          const state = await nats.jetStreamState(s.node);
          if (state !== 'enabled') {
            // What an operator does for a node whose JetStream stopped on a full disk: restart it.
            note(`n${s.node + 1} ${state === 'disabled' ? 'says its JetStream is disabled' : 'does not answer its monitoring port'}; restarted it`);
            await nats.kill(s.node);
            await nats.restart(s.node);
          }
        };
      }
    }
  }
}
