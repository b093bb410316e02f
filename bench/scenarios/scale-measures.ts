// What the scale scenario (scale.ts) measures in its phases: live delivery at a rate of deliveries
// (every generator listening), a phase's CPU profile in every gateway and its report, and the
// JetStream requests made since a snapshot.

import { Histogram } from '../lib/histogram.js';
import type { JsApiCounter, JsApiCounts } from '../lib/js-api-count.js';
import type { LoadGen } from '../lib/loadgen-client.js';
import type { PublishSpec } from '../lib/loadgen-commands.js';
import { cpuSeconds } from '../lib/procs.js';
import { readProfile, summarize, type ProfileSummary } from '../lib/profile-summary.js';
import { table, type ScenarioOptions } from '../lib/report.js';
import type { RelaySystem } from '../systems/relay.js';
import { existsSync, rmSync } from 'node:fs';
import { waitUntil } from '../../tools/poll.js';
import type { Planned } from './scale-plan.js';

interface Delivery {
  delivered: number;
  seconds: number;
  hist: Array<[number, number]>;
  loadgenCpu: number;
}

/** JetStream requests since `before`; a resume's look-up follows its stream's ready marker, so a moment is left for the last. */
export async function apiSince(counter: JsApiCounter, before: JsApiCounts): Promise<JsApiCounts> {
  await new Promise((r) => setTimeout(r, 1000));
  const now = await counter.snapshot();
  return { requests: now.requests - before.requests, consumersCreated: now.consumersCreated - before.consumersCreated };
}

export interface DeliveryPoint {
  target: number;
  perSecond: number;
  deliveredPerSecond: number;
  p50: number;
  p99: number;
  loadgenCpu: number;
  errors: number;
  /** CPU time of the gateways (and of the whole relay) per frame delivered, in microseconds. */
  gatewayUs: number;
  relayUs: number;
}

/** Posts to the big channels at the rate that makes `target` deliveries/s; every generator listens. */
export async function deliver(relay: RelaySystem, loadgens: LoadGen[], big: Planned[], target: number, measureMs: number): Promise<DeliveryPoint> {
  const perMessage = big.reduce((s, p) => s + p.count, 0) / big.length;
  const perSecond = Math.max(1, target / perMessage);
  const publish: PublishSpec = relay.publishSpec(big.map((p) => p.channel), perSecond, 8);
  const gateways = relay.gatewayPids;
  const all = relay.pids();
  const cpu = (pids: number[]): number => pids.reduce((s, p) => s + cpuSeconds(p), 0);
  const [g0, r0, t0] = [cpu(gateways), cpu(all), performance.now()];
  const [pub, ...heard] = await Promise.all([
    loadgens[0]!.send<Delivery & { sent: number; acked: number; errors: number }>({ cmd: 'fanout', publish, warmupMs: 2000, measureMs }),
    ...loadgens.slice(1).map((lg) => lg.send<Delivery>({ cmd: 'listen', warmupMs: 2000, measureMs })),
  ]);
  // CPU over the whole window (warm-up included), frames at the measured rate over the same window.
  const [g1, r1, seconds] = [cpu(gateways), cpu(all), (performance.now() - t0) / 1000];
  const got = [pub, ...heard];
  const hist = new Histogram();
  for (const h of got) hist.merge(Histogram.fromSparse(h.hist));
  const deliveredPerSecond = got.reduce((s, h) => s + h.delivered, 0) / pub.seconds;
  const frames = deliveredPerSecond * seconds;
  return {
    target,
    perSecond,
    deliveredPerSecond,
    p50: hist.percentile(50),
    p99: hist.percentile(99),
    loadgenCpu: Math.max(...got.map((h) => h.loadgenCpu)),
    errors: pub.errors,
    gatewayUs: ((g1 - g0) * 1e6) / frames,
    relayUs: ((r1 - r0) * 1e6) / frames,
  };
}

/** A phase's CPU profile, all gateways merged (BENCH_PROFILE=phases). */
export interface PhaseProfile {
  phase: string;
  summary: ProfileSummary;
}

/**
 * Runs `work` with every gateway's CPU profiler on (BENCH_PROFILE=phases), so a profile shows one
 * phase and nothing before it; without profiling, just runs it.
 */
export async function profiled<T>(relay: RelaySystem, phase: string, into: PhaseProfile[], opts: ScenarioOptions, work: () => Promise<T>): Promise<T> {
  const files = relay.phaseProfiles;
  if (files === null) return work();
  for (const f of files) rmSync(f, { force: true });
  const toggle = (): void => relay.gatewayPids.forEach((pid) => process.kill(pid, 'SIGWINCH'));
  toggle();
  const result = await work();
  toggle();
  await waitUntil(() => files.every((f) => existsSync(f)), `the gateways' profiles of ${phase}`, { timeoutMs: 60_000, intervalMs: 100 });
  const summary = summarize(files.map(readProfile), 10);
  into.push({ phase, summary });
  const idle = (summary.idleMs / Math.max(1, summary.totalMs)) * 100;
  opts.log(`scale: profile of ${phase} (gateways, ${idle.toFixed(0)} % idle): ${summary.byFunction.slice(0, 5).map(([f, v]) => `${f.split('  ')[0]} ${v.toFixed(1)} %`).join(', ')}`);
  return result;
}

/** The phases' profiles as tables: the gateways' heaviest functions by self time, shares of busy time. */
export function profileText(profiles: PhaseProfile[]): string {
  if (profiles.length === 0) return '';
  return (
    `\nWhere the gateways' CPU goes in each phase (BENCH_PROFILE=phases: V8's sampling profiler in every gateway for that phase only, merged; self time as a share of the time not idle):\n` +
    profiles
      .map((p) => {
        const idle = (p.summary.idleMs / Math.max(1, p.summary.totalMs)) * 100;
        return `\n${p.phase} (${idle.toFixed(0)} % idle)\n\n` + table(['function', 'where', '% busy'], p.summary.byFunction.map(([f, v]) => [...f.split('  '), v])) + '\n';
      })
      .join('')
  );
}
