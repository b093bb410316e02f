// Single schedules of a scenario, outside the explorer's search: one given step by step (a
// regression schedule, or one to read), or ones chosen at random from seeds (what a bounded search
// leaves out). A seed or a list of steps reruns its schedule alone.

import type { Failure, Scenario, Taken } from './explorer.js';

/**
 * Runs `count` schedules chosen at random, seeds `first`, `first + 1`, ...: at each step one of the
 * steps that can be taken, uniformly. What bounded search leaves out (schedules far from the default
 * order) is sampled this way; a seed reruns its schedule alone (`sampleOne`).
 */
export async function sample(scenario: Scenario, count: number, first = 1): Promise<{ schedules: number; failure?: Failure & { seed: number } }> {
  for (let seed = first; seed < first + count; seed++) {
    const r = await sampleOne(scenario, seed);
    if (r.problems.length > 0) return { schedules: seed - first + 1, failure: { index: seed - first + 1, seed, steps: r.steps, problems: r.problems } };
  }
  return { schedules: count };
}

/** The schedule of one seed. */
export async function sampleOne(scenario: Scenario, seed: number): Promise<{ steps: Taken[]; problems: string[] }> {
  const random = mulberry32(seed);
  const run = await scenario.build();
  const steps: Taken[] = [];
  for (;;) {
    const enabled = run.enabled();
    if (enabled.length === 0) return { steps, problems: await run.atEnd() };
    steps.push(await run.take(enabled[Math.floor(random() * enabled.length)]!.id));
    const problems = run.afterStep();
    if (problems.length > 0) return { steps, problems };
  }
}

/** A small seeded generator (mulberry32): the same seed, the same schedule. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs one schedule: the given steps in order, then the oldest step each time until none is left.
 * A step that cannot be taken when its turn comes throws, unless `lenient`: then it is passed over
 * (a regression schedule recorded before a fix may name steps the fixed code no longer takes).
 */
export async function replay(scenario: Scenario, schedule: readonly string[], options: { lenient?: boolean } = {}): Promise<{ steps: Taken[]; problems: string[]; passedOver: number }> {
  const run = await scenario.build();
  const steps: Taken[] = [];
  let passedOver = 0;
  for (let i = 0; ; i++) {
    const enabled = run.enabled();
    if (enabled.length === 0) return { steps, problems: await run.atEnd(), passedOver };
    const id = i < schedule.length ? schedule[i]! : enabled[0]!.id;
    if (!enabled.some((s) => s.id === id)) {
      if (options.lenient !== true) throw new Error(`${scenario.name}: step ${i + 1} (${id}) is not enabled; enabled: ${enabled.map((s) => s.id).join(', ')}`);
      passedOver++;
      continue;
    }
    steps.push(await run.take(id));
    const problems = run.afterStep();
    if (problems.length > 0) return { steps, problems, passedOver };
  }
}
