// The region campaign's nemesis: plays the region schedule against the super-cluster, one fault at a
// time, each started, held and healed, both moments in the history (as nemesis.ts does for one log).
// A link fault sets the super-cluster's proxies; a region's kill takes its servers and its relays,
// and its heal starts the servers, waits for the gateways, then starts the relays. A restart while
// cut off cuts the region, kills its relays a moment later and starts them again there, and heals
// the cut only once they have been ready a while. An ingress pause stops the region's ingress
// (SIGSTOP) and its heal lets it run on (SIGCONT). A fault starts no sooner than 4 s after the
// previous heal, however late that heal came.

import type { History } from './history.js';
import type { RegionMesh } from './region-mesh.js';
import { describeRegionFault, regionKindOf, type RegionFault, type RegionFaultKind, type RegionLink } from './region-schedule.js';
import type { FaultWindow } from './records.js';
import type { ProxyMode } from './tcp-proxy.js';

export interface RegionExecutedFault extends FaultWindow {
  kind: RegionFaultKind;
  text: string;
  notes: string[];
  /**
   * When a region's own clients may be refused: a killed region from its kill to its relays ready
   * again, a region whose relays were restarted while cut off from their kill to both ready, a
   * region's writers while its ingress is paused.
   */
  down?: DownWindow;
}

export interface DownWindow {
  region: string;
  start: number;
  end: number;
  /** Only its writes may be refused (its ingress paused); its readers' streams must hold. */
  writesOnly?: boolean;
}

/** Quiet time after a heal before the next fault, whatever the plan says (docs/RELIABILITY.md). */
export const MIN_GAP_MS = 4000;

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
    let healed = -MIN_GAP_MS;
    for (const f of faults) {
      if (this.stopped) return;
      await sleep(Math.max(f.at, healed + MIN_GAP_MS) - history.now());
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
      done.end = healed = history.now();
      if (done.down !== undefined && done.down.end === Number.POSITIVE_INFINITY) done.down.end = done.end;
      history.record('fault', `#${f.id}`, `healed ${done.text}${done.notes.length > 0 ? ` (${done.notes.join('; ')})` : ''}`);
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /** `killAfterMs` into the cut, the region's relays killed and started again; resolves when both are ready (history time). */
  private async restartWhileCut(f: RegionFault, region: string, killAfterMs: number, done: RegionExecutedFault): Promise<number> {
    const { history } = this;
    await sleep(done.start + killAfterMs - history.now());
    const down = { region, start: history.now(), end: Number.POSITIVE_INFINITY };
    done.down = down;
    history.record('fault', `#${f.id}`, `${region}'s ingress and gateway SIGKILLed, started again while ${region} is cut off`);
    await this.mesh.restartRelays(region, (text) => void done.notes.push(text));
    down.end = history.now();
    const took = `${((down.end - down.start) / 1000).toFixed(1)} s`;
    done.notes.push(`${region}'s relays ready ${took} after their kill, still cut off`);
    history.record('fault', `#${f.id}`, `${region}'s ingress and gateway ready again (${took}), still cut off`);
    return down.end;
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
        const down = { region, start: done.start, end: Number.POSITIVE_INFINITY };
        done.down = down;
        await this.mesh.killRegion(region);
        this.onDown(region);
        return async () => {
          const t0 = this.history.now();
          await this.mesh.restartRegion(region, (text) => void done.notes.push(text));
          down.end = this.history.now();
          done.notes.push(`${region} and its relays back ${((down.end - t0) / 1000).toFixed(1)} s after the restart began`);
        };
      }
      case 'pause-ingress': {
        const region = regions[s.region]!;
        const down: DownWindow = { region, start: done.start, end: Number.POSITIVE_INFINITY, writesOnly: true };
        done.down = down;
        this.mesh.signalIngress(region, 'SIGSTOP');
        return async () => {
          this.mesh.signalIngress(region, 'SIGCONT');
          down.end = this.history.now();
        };
      }
      case 'restart-cut': {
        const region = regions[s.region]!;
        sc.isolate(region, { kind: 'cut' });
        this.onDown(region);
        const restarted = this.restartWhileCut(f, region, s.killAfterMs, done);
        restarted.catch(() => undefined);
        return async () => {
          try {
            await sleep((await restarted) + s.holdMs - this.history.now());
          } finally {
            sc.heal();
          }
        };
      }
    }
  }
}
