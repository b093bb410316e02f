// The scale scenario's ownership phase: every claim renewed every 30 s while evictions across two
// gateways are timed (the claims bucket under its heaviest routine load).

import { loadConfig } from '../../services/core/config.js';
import { createLogger } from '../../services/core/logger.js';
import { openNatsContext } from '../../services/core/nats.js';
import { kvStream } from '../../services/core/kv-internals.js';
import { BUCKET_STREAMS } from '../../services/core/subjects.js';
import { Histogram } from '../lib/histogram.js';
import { LoadGen } from '../lib/loadgen-client.js';
import type { ScenarioOptions } from '../lib/report.js';
import { startSimulatedMesh, type SimulatedMesh } from '../lib/simulated-mesh.js';
import { startRelay, type RelaySystem } from '../systems/relay.js';
import { channelPlan, openAll, PER_PROCESS } from './scale-plan.js';

export interface OwnershipResult {
  streams: number;
  seconds: number;
  kvWritesPerSecond: number;
  trials: number;
  failures: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * Ownership at scale: the same streams with CLAIM_TTL at its minimum (1 m), so every gateway rewrites
 * all its claims every 30 s instead of every 30 min; for a minute, the rate of writes to KV
 * relay-streams, then the eviction time across two gateways while the rewrites go on. With
 * `--million`, the simulated rest of the mesh is written first and renewed throughout, at the rate
 * of the default CLAIM_TTL (the real gateways' 1 m would be 30,000 writes/s, beyond this machine).
 */
export async function ownershipPhase(total: number, opts: ScenarioOptions): Promise<OwnershipResult> {
  const groups = Math.max(2, Math.ceil(total / PER_PROCESS));
  const per = Math.ceil(total / groups);
  const plan = channelPlan(groups * per);
  const relay = await startRelay({ gateways: groups, env: { CLAIM_TTL: '1m' }, cluster: opts.cluster });
  const loadgens = Array.from({ length: groups }, () => new LoadGen());
  const quiet = createLogger({ level: 'warn', pretty: false });
  const ctx = await openNatsContext(loadConfig('all', { NATS_URL: relay.natsUrl }), 'bench-ownership', quiet);
  let simulated: SimulatedMesh | null = null;
  try {
    if (opts.million === true) simulated = await startSimulatedMesh(relay.natsUrl);
    await openAll(relay, loadgens, plan, per, 200, 0);
    const lastSeq = async (): Promise<number> => (await ctx.jsm.streams.info(kvStream(BUCKET_STREAMS))).state.last_seq;
    const windowMs = opts.quick ? 30_000 : 60_000;
    // First the renewals alone (two of their 30-s cycles in a full run), then evictions over as long.
    const seq0 = await lastSeq();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, windowMs));
    const kvWritesPerSecond = ((await lastSeq()) - seq0) / ((performance.now() - t0) / 1000);
    const hist = new Histogram();
    let trials = 0;
    let failures = 0;
    const t1 = performance.now();
    // Paced, 20 a second, so the trials' own claims do not swamp the renewals they are measured under.
    for (let batch = 0; performance.now() - t1 < windowMs; batch++) {
      const next = t1 + (batch + 1) * 1000;
      // Identities far from the streams' own, a channel of their own: each trial is one eviction.
      const spec = (g: number): ReturnType<RelaySystem['streamSpecOn']> => ({ ...relay.streamSpecOn(g, 1, ['evict.example.net'], 1), offset: 10_000_000 + batch * 20 });
      const r = await loadgens[0]!.send<{ hist: Array<[number, number]>; failures: number; trials: number }>({ cmd: 'evict', first: spec(0), second: spec(1), trials: 20 });
      hist.merge(Histogram.fromSparse(r.hist));
      trials += r.trials;
      failures += r.failures;
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
    const seconds = windowMs / 1000;
    const result = { streams: groups * per, seconds, kvWritesPerSecond, trials, failures, p50: hist.percentile(50), p99: hist.percentile(99), max: hist.max };
    opts.log(`scale: ownership at ${groups * per} claims, CLAIM_TTL=1m: ${result.kvWritesPerSecond.toFixed(0)} KV writes/s, eviction p99 ${result.p99.toFixed(1)} ms over ${trials} trials`);
    return result;
  } finally {
    await simulated?.stop();
    await ctx.nc.drain().catch(() => undefined);
    await Promise.all(loadgens.map((lg) => lg.close()));
    await relay.stop();
  }
}
