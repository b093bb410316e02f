// The region campaign's clients: on each channel, writers posting in their own region (its ingress
// only: docs/REGIONS.md promises order per sender within a region; some send a POST their region
// refused or did not answer to the next region's instead) and readers in every region; now
// and then a reader moves to another region resuming from its id, and the readers of a region cut
// off or lost move out of it (the players' fail-over). Writers are the one-log campaign's (writers.ts).

import { reached } from './check-region-readers.js';
import type { History } from './history.js';
import { Random } from './random.js';
import type { ClientRecord, WriteOp } from './records.js';
import type { RegionMesh } from './region-mesh.js';
import { RegionReader } from './region-readers.js';
import { Writer } from './writers.js';

export interface RegionWorkloadOptions {
  seed: number;
  channels: number;
  writersPerRegion: number;
  readersPerRegion: number;
  pace: [number, number];
  /** Time between two moves of a reader to another region (ms). */
  moveEvery: [number, number];
  /** Readers of a region cut off or lost that move out of it. */
  takeovers: number;
  /**
   * Of each region's writers, how many (the last ones) fail over: a POST refused or unanswered by
   * its region's ingress is sent again, with its Idempotency-Key, to the next region's, until answered.
   */
  failOverWriters?: number;
}

export class RegionWorkload {
  readonly writers: Writer[] = [];
  readonly readers: RegionReader[] = [];
  private readonly random: Random;
  private mover: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: RegionWorkloadOptions,
    mesh: RegionMesh,
    private readonly history: History,
  ) {
    this.random = Random.derive(o.seed, 'region workload');
    const gateway = (region: string): { nodeId: string; url: string } => {
      const g = mesh.relay(region, 'gateway');
      return { nodeId: g.nodeId, url: g.url };
    };
    for (let c = 0; c < o.channels; c++) {
      const channel = `chaos-${c + 1}.example.net`;
      for (const [h, region] of mesh.regions.entries()) {
        const ingress = mesh.relay(region, 'ingress').url;
        const away = mesh.relay(mesh.regions[(h + 1) % mesh.regions.length]!, 'ingress').url;
        for (let i = 0; i < o.writersPerRegion; i++) {
          const random = Random.derive(o.seed, `writer ${c} ${region} ${i}`);
          const failsOver = i >= o.writersPerRegion - (o.failOverWriters ?? 0);
          // Its first attempt at home, every later one (each after a refusal or a failure) in the next region.
          const route = failsOver ? { route: (attempt: number): string => (attempt === 1 ? ingress : away) } : {};
          this.writers.push(new Writer({ name: `w${c + 1}${region}_${i + 1}`, channel, key: mesh.key, ingresses: () => [ingress], history, random, pace: o.pace, ...route }));
        }
        for (let i = 0; i < o.readersPerRegion; i++) {
          this.readers.push(new RegionReader({ name: `r${c + 1}${region}_${i + 1}`, channel, key: mesh.key, regions: mesh.regions, home: h, gateway, history }));
        }
      }
    }
  }

  async start(): Promise<void> {
    for (const r of this.readers) r.start();
    await Promise.all(this.readers.map((r) => r.opened(60_000)));
    for (const w of this.writers) w.start();
    this.scheduleMove();
  }

  private scheduleMove(): void {
    const [min, max] = this.o.moveEvery;
    this.mover = setTimeout(() => {
      const reader = this.random.pick(this.readers);
      this.history.record('note', reader.name, `mover: ${reader.name} leaves ${reader.region()} (${reader.moveOn()})`);
      this.scheduleMove();
    }, this.random.int(min, max));
  }

  /** Its region is cut off or lost: some of its readers resume in another region. */
  leave(region: string): void {
    const on = this.readers.filter((r) => r.region() === region);
    for (const r of this.random.shuffle(on).slice(0, this.o.takeovers)) {
      this.history.record('note', r.name, `mover: ${r.name} leaves ${region}, which is down (${r.moveOn()})`);
    }
  }

  async quiesce(ms: number): Promise<void> {
    clearTimeout(this.mover);
    for (const w of this.writers) w.stop();
    await Promise.all(this.writers.map((w) => w.settle(ms)));
    for (const w of this.writers) w.abandon();
  }

  ops(): WriteOp[] {
    return this.writers.flatMap((w) => w.ops);
  }

  clients(): Array<ClientRecord<string>> {
    return this.readers.flatMap((r) => r.clients);
  }

  /** Resolves once every running client's id names each region's newest entry of its channel, or after `ms`. */
  async caughtUp(newest: (channel: string) => ReadonlyMap<string, number>, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    const behind = (): boolean => this.readers.some((r) => r.running().some((c) => !reached(c.frames.at(-1)?.id ?? c.startId, newest(c.channel))));
    while (behind() && Date.now() < deadline) await new Promise((res) => setTimeout(res, 250));
  }

  stop(): void {
    clearTimeout(this.mover);
    for (const r of this.readers) r.stop();
  }
}
