// The nemesis's plan: which fault, on what, when and for how long, drawn from the seed alone, so a
// run is repeated by its seed. Faults come one after another (each healed before the next), drawn
// from shuffled decks of every kind, so every kind comes up evenly and a long run covers them all.

import { Random } from './random.js';

export type Role = 'nats' | 'gateway' | 'ingress';
export type LinkFault = 'cut' | 'blackhole' | 'slow';

export type FaultSpec =
  /** kill -9, restarted when the fault heals. */
  | { kind: 'kill'; role: Role; index: number }
  /** SIGSTOP of NATS nodes, SIGCONT when it heals: the event log's leader, one follower, or two nodes. */
  | { kind: 'pause-nats'; which: 'leader' | 'minority' | 'majority' }
  /** SIGSTOP of a gateway long enough for its claims to be taken over (accounts reopen elsewhere, a sweep). */
  | { kind: 'pause-gateway'; index: number }
  /** One NATS node cut off from the other two (its routes through the proxies). */
  | { kind: 'partition-nats'; node: number | 'leader'; link: LinkFault; delayMs: number }
  /** A relay process cut off from every NATS node, or from one. */
  | { kind: 'partition-relay'; role: 'gateway' | 'ingress'; index: number; from: 'all' | number; link: LinkFault; delayMs: number }
  /** One node's store full (its tmpfs filled), emptied when it heals. */
  | { kind: 'disk-full'; node: number };

export interface Fault {
  id: number;
  /** Planned start, ms after the workload began (later if the previous heal took longer). */
  at: number;
  durationMs: number;
  spec: FaultSpec;
}

/** How many processes of each kind the mesh has. */
export interface Shape {
  nats: number;
  gateways: number;
  ingresses: number;
}

/** Every kind the campaign covers, as reported ("faults by kind"). */
export const FAULT_KINDS = [
  'kill nats',
  'kill gateway',
  'kill ingress',
  'pause nats leader',
  'pause nats minority',
  'pause nats majority',
  'pause gateway',
  'partition nats cut',
  'partition nats blackhole',
  'partition nats slow',
  'partition relay cut',
  'partition relay blackhole',
  'partition relay slow',
  'disk full',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export function kindOf(spec: FaultSpec): FaultKind {
  switch (spec.kind) {
    case 'kill':
      return `kill ${spec.role}`;
    case 'pause-nats':
      return `pause nats ${spec.which}`;
    case 'pause-gateway':
      return 'pause gateway';
    case 'partition-nats':
      return `partition nats ${spec.link}`;
    case 'partition-relay':
      return `partition relay ${spec.link}`;
    case 'disk-full':
      return 'disk full';
  }
}

/** Ranges (ms) of each kind's duration: long enough to matter, short enough for many faults a run. */
const DURATION: Record<FaultSpec['kind'], [number, number]> = {
  kill: [1000, 8000],
  'pause-nats': [2000, 10_000],
  // Past NODE_TIMEOUT (the campaign's 5 s) a paused gateway's claims are also swept.
  'pause-gateway': [4000, 16_000],
  'partition-nats': [2000, 12_000],
  'partition-relay': [2000, 12_000],
  'disk-full': [4000, 10_000],
};
/** Quiet time between one heal and the next fault. */
const GAP: [number, number] = [1500, 5000];
/** Time for the workload to settle before the first fault. */
export const WARM_UP_MS = 8000;

function specFor(kind: FaultKind, r: Random, shape: Shape): FaultSpec {
  const link = (): LinkFault => kind.split(' ').at(-1) as LinkFault;
  const delayMs = r.int(100, 1000);
  switch (kind) {
    case 'kill nats':
      return { kind: 'kill', role: 'nats', index: r.int(0, shape.nats - 1) };
    case 'kill gateway':
      return { kind: 'kill', role: 'gateway', index: r.int(0, shape.gateways - 1) };
    case 'kill ingress':
      return { kind: 'kill', role: 'ingress', index: r.int(0, shape.ingresses - 1) };
    case 'pause nats leader':
      return { kind: 'pause-nats', which: 'leader' };
    case 'pause nats minority':
      return { kind: 'pause-nats', which: 'minority' };
    case 'pause nats majority':
      return { kind: 'pause-nats', which: 'majority' };
    case 'pause gateway':
      return { kind: 'pause-gateway', index: r.int(0, shape.gateways - 1) };
    case 'partition nats cut':
    case 'partition nats blackhole':
    case 'partition nats slow':
      return { kind: 'partition-nats', node: r.chance(0.5) ? 'leader' : r.int(0, shape.nats - 1), link: link(), delayMs };
    case 'partition relay cut':
    case 'partition relay blackhole':
    case 'partition relay slow': {
      const role = r.chance(0.5) ? 'gateway' : 'ingress';
      const index = r.int(0, (role === 'gateway' ? shape.gateways : shape.ingresses) - 1);
      return { kind: 'partition-relay', role, index, from: r.chance(0.6) ? 'all' : r.int(0, shape.nats - 1), link: link(), delayMs };
    }
    case 'disk full':
      return { kind: 'disk-full', node: r.int(0, shape.nats - 1) };
  }
}

/**
 * The faults of a run of `runMs`, in order, none overlapping, the last healed by `runMs`. Kinds come
 * from decks holding each kind once, shuffled: any stretch of FAULT_KINDS.length faults covers every
 * kind at most twice and a run of two decks covers each at least once. `kinds` narrows the decks.
 */
export function planFaults(seed: number, runMs: number, shape: Shape, kinds: readonly FaultKind[] = FAULT_KINDS): Fault[] {
  const r = Random.derive(seed, 'schedule');
  const faults: Fault[] = [];
  let t = WARM_UP_MS;
  let deck: FaultKind[] = [];
  for (;;) {
    if (deck.length === 0) deck = r.shuffle(kinds);
    const kind = deck.shift()!;
    const spec = specFor(kind, r, shape);
    const [min, max] = DURATION[spec.kind];
    const durationMs = r.int(min, max);
    if (t + durationMs > runMs) return faults;
    faults.push({ id: faults.length + 1, at: t, durationMs, spec });
    t += durationMs + r.int(GAP[0], GAP[1]);
  }
}

/** One line for the report and the log: "pause nats majority 6.2 s". */
export function describeFault(f: Fault): string {
  const s = f.spec;
  const what =
    s.kind === 'kill'
      ? `${s.role} ${s.index + 1}`
      : s.kind === 'pause-gateway'
        ? `gateway ${s.index + 1}`
        : s.kind === 'partition-nats'
          ? `${s.node === 'leader' ? 'the log leader' : `node ${s.node + 1}`}${s.link === 'slow' ? ` +${s.delayMs} ms` : ''}`
          : s.kind === 'partition-relay'
            ? `${s.role} ${s.index + 1} from ${s.from === 'all' ? 'every node' : `node ${s.from + 1}`}${s.link === 'slow' ? ` +${s.delayMs} ms` : ''}`
            : s.kind === 'disk-full'
              ? `node ${s.node + 1}`
              : '';
  return `#${f.id} ${kindOf(s)}${what === '' ? '' : ` (${what})`} for ${(f.durationMs / 1000).toFixed(1)} s`;
}
