// The region campaign's plan (`npm run chaos -- --regions 3`): which region fault, on which region,
// when and for how long, from the seed alone, dealt from shuffled decks as schedule.ts deals the
// one-log faults. Faults come one after another, each healed before the next.

import { CUT_OFF_AFTER_MS } from '../../services/core/cut-off-start.js';
import { Random } from './random.js';
import { WARM_UP_MS } from './schedule.js';

export type RegionLink = 'cut' | 'blackhole' | 'slow';

export type RegionFaultSpec =
  /** Every link of one region in one mode (sc.isolate): the region cut off, blackholed or slowed. */
  | { kind: 'isolate'; region: number; link: RegionLink; delayMs: number }
  /** The link between two regions only, both directions: each still reaches the third. */
  | { kind: 'link'; a: number; b: number; link: RegionLink; delayMs: number }
  /** A region lost whole (its servers and relays, SIGKILL), started again when the fault heals. */
  | { kind: 'kill-region'; region: number }
  /**
   * A region cut off, then `killAfterMs` later its ingress and gateway SIGKILLed and started again
   * while it stays cut off (they start unchecked after CUT_OFF_AFTER_MS of meta silence), the cut
   * held `holdMs` after both are ready, then healed.
   */
  | { kind: 'restart-cut'; region: number; killAfterMs: number; holdMs: number }
  /**
   * A region's ingress paused (SIGSTOP) longer than a writer waits for an answer, then continued: the
   * POSTs it holds fail over to the next region, and it may still store them once it runs again.
   */
  | { kind: 'pause-ingress'; region: number };

export interface RegionFault {
  id: number;
  at: number;
  durationMs: number;
  spec: RegionFaultSpec;
}

export const REGION_FAULT_KINDS = ['region cut', 'region blackhole', 'region slow', 'link cut', 'link blackhole', 'region kill', 'region restart cut', 'ingress pause'] as const;
export type RegionFaultKind = (typeof REGION_FAULT_KINDS)[number];

export function regionKindOf(spec: RegionFaultSpec): RegionFaultKind {
  if (spec.kind === 'restart-cut') return 'region restart cut';
  if (spec.kind === 'pause-ingress') return 'ingress pause';
  return spec.kind === 'kill-region' ? 'region kill' : spec.kind === 'isolate' ? `region ${spec.link}` : spec.link === 'slow' ? 'region slow' : `link ${spec.link}`;
}

/** Long enough for the link check (2 s) and the gateways to notice, short enough for several a run. */
const DURATION: Record<Exclude<RegionFaultSpec['kind'], 'restart-cut'>, [number, number]> = {
  isolate: [4000, 15_000],
  link: [4000, 12_000],
  'kill-region': [3000, 10_000],
  // Past the writers' 8 s watchdog (writers.ts), so the POST in flight is sent again elsewhere.
  'pause-ingress': [9000, 14_000],
};
/**
 * A restart while cut off: the kill 1-5 s into the cut (before and after the link check, 2 s, sees
 * it), the cut held 3-10 s once both relays are ready again. The plan counts their start as the meta
 * silence waited out twice (as a gateway did before its sweep took the start-up's conclusion of a
 * cut: 31-37 s measured then, 17-22 s now) plus 5 s, kept so a seed plans as it did; the nemesis
 * heals no sooner than `holdMs` after they are ready.
 */
const KILL_AFTER: [number, number] = [1000, 5000];
const HOLD: [number, number] = [3000, 10_000];
export const START_WHILE_CUT_MS = 2 * CUT_OFF_AFTER_MS + 5000;
/** Quiet time between a heal and the next fault: the gateways reconnect in 3-5 s (docs/REGIONS.md). */
const GAP: [number, number] = [4000, 8000];

function specFor(kind: RegionFaultKind, r: Random, regions: number): RegionFaultSpec {
  const region = r.int(0, regions - 1);
  const delayMs = r.int(50, 500);
  switch (kind) {
    case 'region cut':
    case 'region blackhole':
    case 'region slow':
      return { kind: 'isolate', region, link: kind.split(' ')[1] as RegionLink, delayMs };
    case 'link cut':
    case 'link blackhole':
      return { kind: 'link', a: region, b: (region + r.int(1, regions - 1)) % regions, link: kind.split(' ')[1] as RegionLink, delayMs };
    case 'region kill':
      return { kind: 'kill-region', region };
    case 'region restart cut':
      return { kind: 'restart-cut', region, killAfterMs: r.int(KILL_AFTER[0], KILL_AFTER[1]), holdMs: r.int(HOLD[0], HOLD[1]) };
    case 'ingress pause':
      return { kind: 'pause-ingress', region };
  }
}

/** The faults of a run of `runMs` over `regions` regions, in order, none overlapping, the last healed by `runMs`. */
export function planRegionFaults(seed: number, runMs: number, regions: number, kinds: readonly RegionFaultKind[] = REGION_FAULT_KINDS): RegionFault[] {
  const r = Random.derive(seed, 'region schedule');
  const faults: RegionFault[] = [];
  let t = WARM_UP_MS;
  let deck: RegionFaultKind[] = [];
  for (;;) {
    if (deck.length === 0) deck = r.shuffle(kinds);
    const spec = specFor(deck.shift()!, r, regions);
    const durationMs = spec.kind === 'restart-cut' ? spec.killAfterMs + START_WHILE_CUT_MS + spec.holdMs : r.int(...DURATION[spec.kind]);
    if (t + durationMs > runMs) return faults;
    faults.push({ id: faults.length + 1, at: t, durationMs, spec });
    t += durationMs + r.int(GAP[0], GAP[1]);
  }
}

/** One line for the report and the log: "#3 region slow (b +120 ms) for 6.2 s". */
export function describeRegionFault(f: RegionFault, names: readonly string[]): string {
  const s = f.spec;
  if (s.kind === 'restart-cut') return `#${f.id} ${regionKindOf(s)} (${names[s.region]}: relays killed at +${(s.killAfterMs / 1000).toFixed(1)} s, cut held ${(s.holdMs / 1000).toFixed(1)} s once ready) for ~${(f.durationMs / 1000).toFixed(1)} s`;
  const what = s.kind === 'kill-region' || s.kind === 'pause-ingress' ? names[s.region] : s.kind === 'isolate' ? `${names[s.region]}${s.link === 'slow' ? ` +${s.delayMs} ms` : ''}` : `${names[s.a]}<->${names[s.b]}`;
  return `#${f.id} ${regionKindOf(s)} (${what}) for ${(f.durationMs / 1000).toFixed(1)} s`;
}
