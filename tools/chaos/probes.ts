// What the campaign watches besides its clients, once a second: each relay's /readyz beside what the
// NATS nodes say of the cluster (does the event log have a leader, does JetStream have a meta
// leader), so the report can say how long a relay called itself ready while it could not store or
// read the log; and a few relay counters summed over every process and restart.

import type { History } from './history.js';
import type { ChaosNats } from './nats-nodes.js';
import type { RelayFleet, RelaySlot } from './relay-fleet.js';

const PROBE_MS = 1000;
/** Counters the report sums (across processes and their restarts). */
export const COUNTERS = [
  'relay_idempotency_unrecorded_total',
  'relay_publish_acks_repeated_total{stored="twice"}',
  'relay_publish_acks_repeated_total{stored="deduplicated"}',
  'relay_evictions_total',
  'relay_live_gaps_filled_total',
] as const;

export interface ReadinessStats {
  /** ms each relay answered /readyz 200 while the event log had no leader. */
  readyWithoutLogLeaderMs: number;
  /** ms it answered 200 while JetStream had no meta leader (no consumer can be made: no resume from the log). */
  readyWithoutMetaLeaderMs: number;
  /** ms it answered 503 (or nothing) while the log and JetStream both had leaders. */
  unreadyWithLeadersMs: number;
}

export class Probes {
  readonly readiness = new Map<string, ReadinessStats>();
  readonly counters = new Map<string, number>();
  /** ms without a log leader / meta leader, as the nodes said. */
  noLogLeaderMs = 0;
  noMetaLeaderMs = 0;
  private readonly last = new Map<string, number>();
  private readonly ready = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private logLeader = true;
  private metaLeader = true;
  /** Time the last tick covered up to, and how long this one covers (ticks stretch while nodes hang). */
  private lastTick = Date.now();
  private span = PROBE_MS;

  constructor(
    private readonly nats: ChaosNats,
    private readonly fleet: RelayFleet,
    private readonly history: History,
  ) {}

  start(): void {
    this.lastTick = Date.now();
    this.timer = setInterval(() => void this.tick(), PROBE_MS);
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const [log, meta] = await Promise.all([this.nats.streamLeader('RELAY'), this.nats.metaLeader()]);
      this.note('log leader', log !== null, `the event log ${log === null ? 'has no leader' : `is led by n${log + 1}`}`);
      this.note('meta leader', meta !== null, `JetStream ${meta === null ? 'has no meta leader' : `meta leader n${meta + 1}`}`);
      this.logLeader = log !== null;
      this.metaLeader = meta !== null;
      const now = Date.now();
      this.span = now - this.lastTick;
      this.lastTick = now;
      if (!this.logLeader) this.noLogLeaderMs += this.span;
      if (!this.metaLeader) this.noMetaLeaderMs += this.span;
      await Promise.all(this.fleet.slots.map((s) => this.probe(s)));
    } finally {
      this.ticking = false;
    }
  }

  private async probe(s: RelaySlot): Promise<void> {
    const r = await this.fleet.readiness(s);
    const ok = r.status === 200;
    const why = ok ? 'ready' : r.status === 0 ? `not answering (${r.body.slice(0, 60)})` : `${r.status} ${r.body.slice(0, 120)}`;
    if (this.ready.get(s.nodeId) !== why) {
      this.ready.set(s.nodeId, why);
      this.history.record('probe', s.nodeId, `/readyz: ${why}`);
    }
    const stats = this.readiness.get(s.nodeId) ?? { readyWithoutLogLeaderMs: 0, readyWithoutMetaLeaderMs: 0, unreadyWithLeadersMs: 0 };
    this.readiness.set(s.nodeId, stats);
    if (ok && !this.logLeader) stats.readyWithoutLogLeaderMs += this.span;
    if (ok && !this.metaLeader) stats.readyWithoutMetaLeaderMs += this.span;
    if (!ok && r.status !== 0 && this.logLeader && this.metaLeader) stats.unreadyWithLeadersMs += this.span;
    const text = await this.fleet.metrics(s);
    if (text !== null) for (const name of COUNTERS) this.count(s.nodeId, name, sum(text, name));
  }

  /** Adds what a counter grew by since the last sample (all of it after a restart reset it). */
  private count(process: string, name: string, value: number): void {
    const key = `${process} ${name}`;
    const before = this.last.get(key) ?? 0;
    this.last.set(key, value);
    this.counters.set(name, (this.counters.get(name) ?? 0) + (value >= before ? value - before : value));
  }

  private readonly states = new Map<string, boolean>();
  private note(what: string, ok: boolean, text: string): void {
    if (this.states.get(what) === ok) return;
    this.states.set(what, ok);
    this.history.record('probe', what, text);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    // A last sample of the counters.
    await Promise.all(this.fleet.slots.map(async (s) => {
      const text = await this.fleet.metrics(s);
      if (text !== null) for (const name of COUNTERS) this.count(s.nodeId, name, sum(text, name));
    }));
  }
}

/**
 * The sum of a metric's samples in Prometheus text: every label set, or with `name{label="value"}`
 * (its first label, as prom-client writes it before the node's) those with that value.
 */
export function sum(text: string, name: string): number {
  const wanted = name.endsWith('}') ? name.slice(0, -1) : name;
  const next = wanted === name ? [' ', '{'] : [',', '}'];
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(wanted)) continue;
    const rest = line.slice(wanted.length);
    if (!next.includes(rest[0] ?? '')) continue;
    const value = Number(line.split(' ').at(-1));
    if (Number.isFinite(value)) total += value;
  }
  return total;
}
