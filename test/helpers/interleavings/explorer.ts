// Every interleaving of a scenario's steps, one schedule at a time. A scenario builds a fresh world
// (twin-mesh.ts) whose steps are the next step of each of its processes (a node's next operation
// landing in a bucket, the next answer it hears, the next message on a channel, its next timer, a
// scripted action); the explorer takes them in every order, replaying a schedule's prefix from a
// fresh world each time (the real code's state cannot be copied), and checks the invariants after
// each step and at the end.
//
// Partial-order reduction with sleep sets (Godefroid): each step reports what it touched (a node, a
// key, liveness, ...). Two steps that touch nothing in common commute, so once the schedules
// starting with one of them are explored, the schedules starting with the other need not take the
// first one next until something it depends on has happened. Every order of dependent steps is still
// explored, and every end state is reached. A run cut short because every step left is asleep counts
// as `pruned`. The order of the search and its budget: `explore` below.

export interface Step {
  /** The process whose next step this is: the same id names the same step when a schedule is replayed. */
  readonly id: string;
}

export interface Taken {
  readonly id: string;
  /** What the step did, in words. */
  readonly label: string;
  /** What it touched: steps whose footprints share nothing commute ("key:*" matches every "key:..."). */
  readonly footprint: ReadonlySet<string>;
}

/** One world, built for one schedule. */
export interface Run {
  /** The steps that can be taken now, oldest first (the first is what a schedule takes by default). */
  enabled(): Step[];
  /** Takes the step and everything it sets off in this process (microtasks), then says what it did. */
  take(id: string): Promise<Taken>;
  /** Invariants that hold after every step: a sentence per violation. */
  afterStep(): string[];
  /** Invariants that hold once no step is left (every operation answered, every message delivered). */
  atEnd(): Promise<string[]>;
}

export interface Scenario {
  readonly name: string;
  build(): Promise<Run>;
  /** The most runs (complete and pruned); beyond it the search stops. */
  readonly budget: number;
  /** The most delays a schedule may have (explore); none: every schedule. */
  readonly delays?: number;
}

export interface Failure {
  /** Which schedule, in the order the search ran them. */
  readonly index: number;
  readonly steps: readonly Taken[];
  readonly problems: readonly string[];
}

export interface Exploration {
  /** Schedules run to their end. */
  schedules: number;
  /** Runs cut short: every step left was asleep (an order already explored). */
  pruned: number;
  /** Every interleaving (up to commuting steps) was explored. */
  exhaustive: boolean;
  /** Every schedule within the scenario's delays was run (the budget did not run out). */
  complete: boolean;
  failure?: Failure;
}

interface Frame {
  readonly enabled: readonly string[];
  /** Steps not to take here, with their footprints: an equivalent order was explored. */
  readonly sleep: ReadonlyMap<string, ReadonlySet<string>>;
  /** Steps already explored from here, with their footprints. */
  readonly done: Map<string, ReadonlySet<string>>;
  chosen: string;
  footprint: ReadonlySet<string>;
  /** Delays spent by the steps before this one. */
  readonly spent: number;
}

export function dependent(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) {
    if (b.has(x)) return true;
    const star = x.endsWith(':*') ? x.slice(0, -1) : null;
    for (const y of b) {
      if (star !== null && y.startsWith(star)) return true;
      if (y.endsWith(':*') && x.startsWith(y.slice(0, -1))) return true;
    }
  }
  return false;
}

/** The steps still asleep after `f`'s chosen step: those it does not depend on. */
function sleepAfter(f: Frame): Map<string, ReadonlySet<string>> {
  const next = new Map<string, ReadonlySet<string>>();
  for (const [id, fp] of [...f.sleep, ...f.done]) if (!dependent(fp, f.footprint)) next.set(id, fp);
  return next;
}

/**
 * Runs the scenario's schedules, stopping at the first that breaks a rule. Without a bound on
 * delays, every schedule (up to commuting steps). With one, every schedule that departs from the
 * default order by at most that many delays (a delay: taking the second oldest step awake rather
 * than the oldest; the third costs two): small departures find most races (delay-bounded search),
 * for a scenario whose every schedule would take too long. The search stops at the budget.
 */
export async function explore(scenario: Scenario): Promise<Exploration> {
  const delays = scenario.delays ?? Infinity;
  const r = await search(scenario, delays, scenario.budget);
  const index = r.schedules + r.pruned;
  return {
    schedules: r.schedules,
    pruned: r.pruned,
    exhaustive: !r.bounded && !r.stopped,
    complete: !r.stopped,
    ...(r.failure !== undefined ? { failure: { ...r.failure, index } } : {}),
  };
}

/** The schedules with at most `delays` delays, up to `budget` runs (sleep sets prune equivalent orders). */
async function search(scenario: Scenario, delays: number, budget: number): Promise<{ schedules: number; pruned: number; bounded: boolean; stopped: boolean; failure?: Failure }> {
  const path: Frame[] = [];
  let [schedules, pruned, bounded] = [0, 0, false];
  for (;;) {
    if (schedules + pruned >= budget) return { schedules, pruned, bounded, stopped: true };
    const run = await scenario.build();
    const steps: Taken[] = [];
    for (let depth = 0; ; depth++) {
      let frame = path[depth];
      if (frame === undefined) {
        const enabled = run.enabled().map((s) => s.id);
        const sleep = depth === 0 ? new Map<string, ReadonlySet<string>>() : sleepAfter(path[depth - 1]!);
        const first = enabled.find((id) => !sleep.has(id));
        if (enabled.length === 0) {
          schedules++;
          const problems = await run.atEnd();
          if (problems.length > 0) return { schedules, pruned, bounded, stopped: false, failure: { index: 0, steps, problems } };
          break;
        }
        if (first === undefined) {
          pruned++;
          break;
        }
        frame = { enabled, sleep, done: new Map(), chosen: first, footprint: new Set(), spent: depth === 0 ? 0 : spent(path[depth - 1]!) };
        path.push(frame);
      } else if (!run.enabled().some((s) => s.id === frame!.chosen)) {
        throw new Error(`${scenario.name}: replaying, ${frame.chosen} is not enabled at step ${depth + 1}: the world is not deterministic`);
      }
      const taken = await run.take(frame.chosen);
      frame.footprint = taken.footprint;
      steps.push(taken);
      const problems = run.afterStep();
      if (problems.length > 0) return { schedules, pruned, bounded, stopped: false, failure: { index: 0, steps, problems } };
    }
    // Back to the deepest step with another order left within the delays.
    while (path.length > 0) {
      const f = path[path.length - 1]!;
      f.done.set(f.chosen, f.footprint);
      const next = f.enabled.find((id) => !f.sleep.has(id) && !f.done.has(id));
      if (next !== undefined && f.spent + delayOf(f, next) <= delays) {
        f.chosen = next;
        break;
      }
      if (next !== undefined) bounded = true;
      path.pop();
    }
    if (path.length === 0) return { schedules, pruned, bounded, stopped: false };
  }
}

/** How many steps awake and older than `id` the frame passes over to take it. */
function delayOf(f: Frame, id: string): number {
  const awake = f.enabled.filter((x) => !f.sleep.has(x));
  return awake.indexOf(id);
}

/** Delays spent up to and including the frame's chosen step. */
function spent(f: Frame): number {
  return f.spent + delayOf(f, f.chosen);
}

/** A failing schedule as a person reads it, with the line that replays it alone. */
export function describeFailure(scenario: Scenario, f: Failure): string {
  const lines = f.steps.map((s, i) => `  ${String(i + 1).padStart(3)}. ${s.label}`);
  const ids = JSON.stringify(f.steps.map((s) => s.id));
  return [
    `${scenario.name}: schedule #${f.index} breaks the rules:`,
    ...f.problems.map((p) => `  - ${p}`),
    'steps:',
    ...lines,
    `replay it alone: replay(scenario, ${ids})`,
  ].join('\n');
}
