// The region campaign's nemesis: plays the region schedule against the super-cluster, one fault at a
// time, each started, held and healed, both moments in the history (as nemesis.ts does for one log).
// A link fault sets the super-cluster's proxies; a region's kill takes its servers and its relays,
// and its heal starts the servers, waits for the gateways, then starts the relays.

import type { History } from './history.js';
import type { RegionMesh } from './region-mesh.js';
import { describeRegionFault, regionKindOf, type RegionFault, type RegionFaultKind, type RegionLink } from './region-schedule.js';
import type { FaultWindow } from './records.js';
import type { ProxyMode } from './tcp-proxy.js';

export interface RegionExecutedFault extends FaultWindow {
  kind: RegionFaultKind;
  text: string;
  notes: string[];
  /** The region killed, for a region kill. */
  killed?: string;
}

function mode(link: RegionLink, delayMs: number): ProxyMode {
  return link === 'slow' ? { kind: 'slow', delayMs } : { kind: link };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

export class RegionNemesis {
  readonly executed: RegionExecutedFault[] = [];
  private stopped = false;

  constructor(
    private readonly mesh: RegionMesh,
    private readonly history: History,
    /** A region was just cut off, blackholed or lost: some of its readers move to another region. */
    private readonly onDown: (region: string) => void = () => undefined,
  ) {}

  /** Plays the faults in order until the schedule or `runMs` ends; every fault started is healed. */
  async run(faults: readonly RegionFault[], runMs: number): Promise<void> {
    const { history } = this;
    for (const f of faults) {
      if (this.stopped) return;
      await sleep(f.at - history.now());
      if (this.stopped || history.now() + f.durationMs > runMs) return;
      const start = history.now();
      const done: RegionExecutedFault = { id: f.id, start, end: start, kind: regionKindOf(f.spec), text: describeRegionFault(f, this.mesh.regions), notes: [] };
      this.executed.push(done);
      history.record('fault', `#${f.id}`, `start ${done.text}`);
      let heal: () => Promise<void>;
      try {
        heal = await this.begin(f, done);
      } catch (e) {
        done.notes.push(`could not start: ${e instanceof Error ? e.message : String(e)}`);
        heal = async () => undefined;
      }
      await sleep(start + f.durationMs - history.now());
      await heal().catch((e: unknown) => void done.notes.push(`could not heal: ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`));
      done.end = history.now();
      history.record('fault', `#${f.id}`, `healed ${done.text}${done.notes.length > 0 ? ` (${done.notes.join('; ')})` : ''}`);
    }
  }

  stop(): void {
    this.stopped = true;
  }

  private async begin(f: RegionFault, done: RegionExecutedFault): Promise<() => Promise<void>> {
    const { sc, regions } = this.mesh;
    const s = f.spec;
    switch (s.kind) {
      case 'isolate': {
        sc.isolate(regions[s.region]!, mode(s.link, s.delayMs));
        if (s.link !== 'slow') this.onDown(regions[s.region]!);
        return async () => sc.heal();
      }
      case 'link': {
        sc.setLink(regions[s.a]!, regions[s.b]!, mode(s.link, s.delayMs));
        return async () => sc.heal();
      }
      case 'kill-region': {
        const region = regions[s.region]!;
        done.killed = region;
        await this.mesh.killRegion(region);
        this.onDown(region);
        return async () => {
          const t0 = this.history.now();
          await this.mesh.restartRegion(region, (text) => void done.notes.push(text));
          done.notes.push(`${region} and its relays back ${((this.history.now() - t0) / 1000).toFixed(1)} s after the restart began`);
        };
      }
    }
  }
}
