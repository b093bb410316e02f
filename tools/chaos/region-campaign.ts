// One run of the region campaign (`npm run chaos -- --regions 3`), from nothing to the verdict: the
// mesh of regions (region-mesh.ts), the workload, the nemesis playing the region schedule, the heal
// and a quiet period, every region's log read straight from its region, and the checker: the write
// checker and the stream checker of the one-log campaign, and the readers checked per region
// (check-region-readers.ts). Everything it started is stopped, however the run ends.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkRegionCopies } from './check-region-copies.js';
import { mayRepeatAcrossRegions } from './check-region-failover.js';
import { checkRegionRefusals } from './check-region-refusals.js';
import { checkRegionReaders } from './check-region-readers.js';
import { checkStreams } from './check-streams.js';
import { checkWrites } from './check-writes.js';
import type { CheckResult } from './checker.js';
import { History, type HistoryEvent } from './history.js';
import type { Anomaly, ClientRecord, LogEntry, WriteOp } from './records.js';
import { readRegionLogs, untilCopiesCaughtUp } from './region-final-state.js';
import { RegionMesh } from './region-mesh.js';
import { RegionNemesis, type RegionExecutedFault } from './region-nemesis.js';
import { planRegionFaults, type RegionFaultKind } from './region-schedule.js';
import { RegionWorkload, type RegionWorkloadOptions } from './region-workload.js';

/**
 * How long after the later open and every fault's heal an older stream of the account may still be
 * sent frames: docs/REGIONS.md resolves a duplicate across regions "within 30 s in any case" (the
 * re-announcement), the link check and the gateways' reconnect included.
 */
export const REGION_EVICTION_GRACE_MS = 32_000;
const MINUTE = 60_000;

export interface RegionCampaignOptions extends Omit<RegionWorkloadOptions, 'seed'> {
  seed: number;
  minutes: number;
  outDir: string;
  regions: readonly string[];
  kinds?: readonly RegionFaultKind[];
  natsServer?: string;
  say: (line: string) => void;
  signal?: AbortSignal;
}

export interface RegionCampaignResult {
  faults: RegionExecutedFault[];
  checked: CheckResult;
  anomalies: Anomaly[];
  log: LogEntry[];
  history: History;
  workloadMs: number;
  ops: WriteOp[];
  clients: Array<ClientRecord<string>>;
  /** POST attempts refused or failed and streams reconnected, of them while their region was up (each an anomaly). */
  refusedAttempts: { all: number; reconnects: number; whileUp: number };
}

/** What every relay process and `relay setup` run with (one server per region: R1). */
const RELAY_ENV: Record<string, string> = {
  STREAM_REPLICAS: '1',
  KV_REPLICAS: '1',
  // Every entry of the run stays to be checked.
  STREAM_MAX_MSGS_PER_CHANNEL: '0',
  PROFILE_API_URL: 'offline',
  NODE_ENV: 'development',
  LOG_LEVEL: 'info',
  RATE_LIMIT_PER_SECOND: '0',
  RATE_LIMIT_BYTES_PER_SECOND: '0',
};

export async function runRegionCampaign(o: RegionCampaignOptions): Promise<RegionCampaignResult> {
  const logDir = join(o.outDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const stops: Array<() => Promise<void>> = [];
  try {
    o.say(`starting ${o.regions.length} regions (${o.regions.join(', ')}), one nats-server each, an ingress and a gateway in each...`);
    const mesh = await RegionMesh.start({ dir: o.outDir, logDir, regions: o.regions, env: RELAY_ENV, ...(o.natsServer !== undefined ? { natsServer: o.natsServer } : {}) });
    stops.push(() => mesh.stop());
    const history = new History();
    const crashes: Anomaly[] = [];
    mesh.onCrash = (who, how) => {
      crashes.push({ class: 'crash', t: history.now(), subjects: [who], text: `${who} exited on its own: ${how}` });
      history.record('fault', who, `exited on its own (${how}); started again`);
      o.say(`${who} exited on its own: ${how}`);
    };
    const workload = new RegionWorkload({ ...o, seed: o.seed }, mesh, history);
    stops.push(async () => workload.stop());
    await workload.start();
    const runMs = o.minutes * MINUTE;
    const faults = planRegionFaults(o.seed, runMs, o.regions.length, o.kinds);
    o.say(`workload running: ${workload.writers.length} writers, ${workload.readers.length} readers; ${faults.length} region faults planned over ${o.minutes} min (seed ${o.seed})`);
    const nemesis = new RegionNemesis(mesh, history, (region) => workload.leave(region));
    const progress = setInterval(() => {
      const acked = workload.ops().filter((op) => op.outcome === 'ok').length;
      o.say(`${(history.now() / 1000).toFixed(0)} s: ${nemesis.executed.length} faults, ${acked} acknowledged POSTs`);
    }, MINUTE / 2);
    o.signal?.addEventListener('abort', () => nemesis.stop());
    await nemesis.run(faults, runMs);
    if (!(o.signal?.aborted ?? false)) await new Promise((r) => setTimeout(r, Math.max(0, runMs - history.now())));
    clearInterval(progress);
    if (o.signal?.aborted ?? false) throw new Error('interrupted');
    const workloadMs = history.now();

    o.say('healed; quiet period: writers finish, gateways reconnect, relays become ready, readers catch up...');
    history.record('note', 'campaign', 'every fault healed: quiet period');
    await workload.quiesce(60_000);
    await mesh.sc.connected(60_000).catch((e: unknown) => o.say(`not every gateway link is up: ${String(e).slice(0, 200)}`));
    await untilReady(mesh, 60_000);
    const places = o.regions.map((r) => ({ name: r, ...mesh.credentials('gateway', r) }));
    if (!(await untilCopiesCaughtUp(places, 60_000))) o.say("a region's copy of another's log is still behind it 60 s on: read as it is");
    const read = await readRegionLogs(places);
    const newest = new Map<string, Map<string, number>>();
    for (const e of read.log) {
      const per = newest.get(e.channel) ?? new Map<string, number>();
      per.set(e.region!, Math.max(per.get(e.region!) ?? 0, e.seq));
      newest.set(e.channel, per);
    }
    await workload.caughtUp((c) => newest.get(c) ?? new Map<string, number>(), 90_000);
    history.record('note', 'campaign', 'caught up (or gave up waiting): checking');

    const ingressRegion = new Map(mesh.relays.filter((s) => s.role === 'ingress').map((s) => [s.url, s.region]));
    const writes = checkWrites(workload.ops(), read.log, mayRepeatAcrossRegions((origin) => ingressRegion.get(origin) ?? null));
    const readers = checkRegionReaders(workload.clients(), read.log);
    const streams = checkStreams(workload.clients(), nemesis.executed, REGION_EVICTION_GRACE_MS);
    const checked: CheckResult = {
      writes: writes.counts,
      readers: readers.counts,
      streams: streams.counts,
      anomalies: [...writes.anomalies, ...readers.anomalies, ...streams.anomalies].sort((a, b) => a.t - b.t),
    };
    // A writer's attempt names the ingress's port (writers.ts); each reader's client stays in one region.
    const portRegion = new Map(mesh.relays.filter((s) => s.role === 'ingress').map((s) => [String(s.port), s.region]));
    const clientRegion = new Map(workload.clients().map((c) => [c.id, c.region ?? null]));
    const regionOf = (e: HistoryEvent): string | null => (e.kind === 'op' ? (portRegion.get(/ to :(\d+) /.exec(e.text)?.[1] ?? '') ?? null) : (clientRegion.get(e.subject) ?? null));
    const down = nemesis.executed.flatMap((f) => (f.down === undefined ? [] : [f.down]));
    const refusals = checkRegionRefusals(history.all(), regionOf, down);
    const anomalies: Anomaly[] = [...crashes, ...checkRegionCopies(read.log, read.copies, history.now()), ...refusals.anomalies];
    for (const [region, seqs] of read.missing) {
      if (seqs.length > 0) anomalies.push({ class: 'lost', t: history.now(), subjects: [], text: `region ${region}'s log has no message at ${seqs.length} sequences: ${seqs.slice(0, 10).join(', ')}` });
    }
    for (const s of mesh.relays) {
      const r = await mesh.readiness(s);
      if (r.status !== 200) anomalies.push({ class: 'unready', t: history.now(), subjects: [s.nodeId], text: `${s.nodeId} answers /readyz ${r.status}: ${r.body.slice(0, 200)}` });
    }
    history.record('note', 'campaign', 'checked');
    return { faults: nemesis.executed, checked, anomalies, log: read.log, history, workloadMs, ops: workload.ops(), clients: workload.clients(), refusedAttempts: { all: refusals.attempts, reconnects: refusals.reconnects, whileUp: refusals.anomalies.length } };
  } finally {
    for (const stop of stops.reverse()) await stop().catch((e: unknown) => o.say(`while stopping: ${String(e)}`));
  }
}

/** Every relay of every region ready (so no POST is still being stored when the logs are read). */
async function untilReady(mesh: RegionMesh, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const states = await Promise.all(mesh.relays.map(async (s) => (await mesh.readiness(s)).status === 200));
    if (states.every(Boolean)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}
