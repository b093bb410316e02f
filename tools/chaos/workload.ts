// The campaign's clients: writers and readers on several channels, and the "evictor" that now and
// then has an account open a second stream on another gateway (and does so for the accounts on a
// gateway the nemesis has just paused, so its claims are taken over while it sleeps).

import type { History } from './history.js';
import { Random } from './random.js';
import { Reader } from './readers.js';
import type { ClientRecord, WriteOp } from './records.js';
import type { RelayFleet } from './relay-fleet.js';
import { Writer } from './writers.js';

export interface WorkloadOptions {
  seed: number;
  channels: number;
  writersPerChannel: number;
  readersPerChannel: number;
  /** Pause between a writer's answer and its next operation (ms). */
  pace: [number, number];
  /** Time between two second streams opened at random (ms). */
  evictEvery: [number, number];
  /** Accounts on a paused gateway that open a stream elsewhere. */
  takeovers: number;
}

export class Workload {
  readonly writers: Writer[] = [];
  readonly readers: Reader[] = [];
  private readonly random: Random;
  private readonly o: WorkloadOptions;
  private readonly history: History;
  private evictor: NodeJS.Timeout | undefined;

  constructor(o: WorkloadOptions, fleet: RelayFleet, key: { clientId: string; clientSecret: string }, history: History) {
    this.o = o;
    this.history = history;
    this.random = Random.derive(o.seed, 'workload');
    const ingresses = (): string[] => fleet.of('ingress').map((s) => s.url);
    const gateways = (): Array<{ nodeId: string; url: string }> => fleet.of('gateway').map((s) => ({ nodeId: s.nodeId, url: s.url }));
    for (let c = 0; c < o.channels; c++) {
      const channel = `chaos-${c + 1}.example.net`;
      for (let i = 0; i < o.writersPerChannel; i++) {
        const random = Random.derive(o.seed, `writer ${c} ${i}`);
        this.writers.push(new Writer({ name: `w${c + 1}_${i + 1}`, channel, key, ingresses, history, random, pace: o.pace }));
      }
      for (let i = 0; i < o.readersPerChannel; i++) this.readers.push(new Reader({ name: `r${c + 1}_${i + 1}`, channel, key, gateways, history }));
    }
  }

  /** Readers first (each confirmed open), then writers, then the evictor. */
  async start(): Promise<void> {
    for (const r of this.readers) r.start();
    await Promise.all(this.readers.map((r) => r.opened(30_000)));
    for (const w of this.writers) w.start();
    this.scheduleEviction();
  }

  private scheduleEviction(): void {
    const [min, max] = this.o.evictEvery;
    this.evictor = setTimeout(() => {
      const reader = this.random.pick(this.readers);
      this.history.record('note', reader.name, `evictor: ${reader.name} opens a second stream (${reader.openSecond()})`);
      this.scheduleEviction();
    }, this.random.int(min, max));
  }

  /** The nemesis paused this gateway: some of the accounts on it open a stream on another one. */
  takeOver(gatewayNodeId: string): void {
    const on = this.readers.filter((r) => r.isOn(gatewayNodeId));
    for (const r of this.random.shuffle(on).slice(0, this.o.takeovers)) {
      this.history.record('note', r.name, `evictor: ${r.name} takes its stream from paused ${gatewayNodeId} (${r.openSecond()})`);
    }
  }

  /** No new write, no new second stream; each writer's operation in flight may finish within `ms`. */
  async quiesce(ms: number): Promise<void> {
    clearTimeout(this.evictor);
    for (const w of this.writers) w.stop();
    await Promise.all(this.writers.map((w) => w.settle(ms)));
    for (const w of this.writers) w.abandon();
  }

  ops(): WriteOp[] {
    return this.writers.flatMap((w) => w.ops);
  }

  clients(): ClientRecord[] {
    return this.readers.flatMap((r) => r.clients);
  }

  /** Resolves once every running client has reached `lastSeq` of its channel, or after `ms`. */
  async caughtUp(lastSeq: (channel: string) => number, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    const behind = (): boolean => this.readers.some((r) => r.running().some((c) => (c.frames.at(-1)?.id ?? c.startId ?? 0) < lastSeq(c.channel)));
    while (behind() && Date.now() < deadline) await new Promise((res) => setTimeout(res, 250));
  }

  stop(): void {
    clearTimeout(this.evictor);
    for (const r of this.readers) r.stop();
  }
}
