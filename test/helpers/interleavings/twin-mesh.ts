// The simulated mesh the interleaving tests run the real ownership code in: two or three nodes
// (twin-node.ts), the claims bucket in memory, the claim index's log, which nodes the
// others take for dead, what is in flight (twin-network.ts), and a scenario's scripted actions
// (act:<name>: an open, a client leaving, a renewal, a sweep, a pause, ...). It is the explorer's
// Run: its steps are the network's processes and the actions enabled now. A paused node runs
// nothing (its operations already sent still land); a crashed one loses what was on its way to it.
// Each step records what it touched (`touch`), for the explorer's partial-order reduction.

import { MemoryClaimStore } from '../memory-claim-store.js';
import type { Run, Step, Taken } from './explorer.js';
import { renewedProblems, settledProblems } from './invariants.js';
import { TwinNetwork, type Process, type RequestOptions } from './twin-network.js';
import { TwinNode } from './twin-node.js';

export interface ActionOptions {
  /** The node whose code it runs: not while that node is paused or crashed. */
  runs?: string;
  /** What else it touches (a pause touches liveness, the passing of a TTL every key). */
  touches?: string[];
  /** Enabled once this holds (for instance, once another action is done). */
  when?: () => boolean;
}

interface Action extends ActionOptions {
  readonly seq: number;
  readonly name: string;
  readonly run: () => void;
  done: boolean;
}

/** Actions come after every other step in the default order: a schedule's first run is the quiet one. */
const ACTIONS_FROM = 1e9;

export class TwinMesh implements Run {
  readonly claims = new MemoryClaimStore(Number.MAX_SAFE_INTEGER);
  /** RELAY_CLAIM_INDEX: each node's claimed keys. */
  readonly index = new Map<string, Set<string>>();
  readonly nodes = new Map<string, TwinNode>();
  /** Nodes the others take for dead: crashed, or paused past the node timeout and not heard since. */
  readonly takenForDead = new Set<string>();
  /** Claim writes that landed, in order: what an eviction is checked against. */
  readonly landed: Array<{ key: string; revision: number; conn: string }> = [];
  /** Broken rules found during the current step. */
  readonly problems: string[] = [];
  readonly network = new TwinNetwork((node) => this.nodes.get(node)?.crashed !== false);
  private readonly actions: Action[] = [];
  private touched = new Set<string>();
  /** The steps `enabled` listed, kept for the `take` that follows (nothing changes in between). */
  private listed: Process[] | null = null;

  /** `witnessed`: where the scenario collects, across its schedules, which races it reached. */
  constructor(private readonly witnessed = new Set<string>()) {}

  node(id: string): TwinNode {
    const n = new TwinNode(this, id);
    this.nodes.set(id, n);
    return n;
  }

  /** A scripted step. */
  act(name: string, run: () => void, options: ActionOptions = {}): void {
    this.actions.push({ seq: ACTIONS_FROM + this.actions.length, name, run, ...options, done: false });
  }

  done(name: string): boolean {
    return this.actions.some((a) => a.name === name && a.done);
  }

  /** Notes that this schedule reached the race `what` (a scenario asserts it reached its own). */
  witness(what: string): void {
    this.witnessed.add(what);
  }

  isAlive(node: string): boolean {
    this.touch('live');
    return !this.takenForDead.has(node);
  }

  touch(token: string): void {
    this.touched.add(token);
  }

  request<T>(node: string, bucket: string, o: RequestOptions<T>): Promise<T> {
    return this.network.request(node, bucket, o);
  }

  inFlight(node: string, matches: (op: RequestOptions<unknown>) => boolean): boolean {
    return this.network.inFlight(node, matches);
  }

  private runs(node: string): boolean {
    const n = this.nodes.get(node);
    return n !== undefined && !n.paused && !n.crashed;
  }

  private processes(): Process[] {
    return [...this.network.processes((n) => this.runs(n)), ...this.enabledActions()].sort((x, y) => x.seq - y.seq);
  }

  private enabledActions(): Process[] {
    const out: Process[] = [];
    for (const a of this.actions) {
      if (a.done || (a.runs !== undefined && !this.runs(a.runs)) || (a.when !== undefined && !a.when())) continue;
      const touches = [...(a.runs === undefined ? [] : [`node:${a.runs}`]), ...(a.touches ?? [])];
      out.push({ id: `act:${a.name}`, seq: a.seq, touches, take: () => ((a.done = true), a.run(), a.name) });
    }
    return out;
  }

  // The explorer's side (Run).

  enabled(): Step[] {
    this.listed = this.processes();
    return this.listed;
  }

  async take(id: string): Promise<Taken> {
    const p = (this.listed ?? this.processes()).find((x) => x.id === id);
    this.listed = null;
    if (p === undefined) throw new Error(`step ${id} is not enabled`);
    this.touched = new Set(p.touches);
    const label = p.take();
    // Everything the step set off in this process (promise continuations) runs before the next step.
    await new Promise((resolve) => setImmediate(resolve));
    return { id, label, footprint: this.touched };
  }

  afterStep(): string[] {
    return this.problems.splice(0);
  }

  /** The rules once nothing is in flight, then once every running node has renewed its claims. */
  async atEnd(): Promise<string[]> {
    const problems = settledProblems(this);
    for (const n of this.nodes.values()) if (!n.crashed && !n.paused) n.renew();
    problems.push(...(await this.runQuietly()), ...renewedProblems(this));
    return problems;
  }

  /** Takes the oldest step until none is left (the quiet schedule); returns the rules broken on the way. */
  async runQuietly(): Promise<string[]> {
    const problems: string[] = [];
    for (let p = this.enabled()[0]; p !== undefined; p = this.enabled()[0]) {
      await this.take(p.id);
      problems.push(...this.afterStep());
    }
    return problems;
  }

  /** Runs the quiet schedule to a scenario's starting state. */
  async setUp(): Promise<void> {
    const problems = await this.runQuietly();
    if (problems.length > 0) throw new Error(`while setting up: ${problems.join('; ')}`);
  }
}
