// One run of the fault campaign, from an empty cluster to the verdict: start three NATS nodes behind
// the proxies, prepare the cluster, start the relays, run the workload while the nemesis plays the
// schedule, heal, let the mesh settle, read the log straight from the stream and check everything
// the clients saw against it. Everything it started is stopped, however the run ends.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkReplicas } from './check-replicas.js';
import { check, type CheckResult } from './checker.js';
import { readFinalState, type FinalState } from './final-state.js';
import { History } from './history.js';
import { ChaosNats } from './nats-nodes.js';
import { Nemesis, type ExecutedFault } from './nemesis.js';
import { prepareCluster } from './prepare-cluster.js';
import { Probes } from './probes.js';
import { Random } from './random.js';
import type { Anomaly, ClientRecord, WriteOp } from './records.js';
import { RelayFleet } from './relay-fleet.js';
import { planFaults, type FaultKind } from './schedule.js';
import { sum } from './probes.js';
import { Workload, type WorkloadOptions } from './workload.js';

export interface CampaignOptions extends Omit<WorkloadOptions, 'seed'> {
  seed: number;
  minutes: number;
  outDir: string;
  gateways: number;
  ingresses: number;
  kinds?: readonly FaultKind[];
  /** The nats-server binary (default: the machine's). */
  natsServer?: string;
  /** Tells the operator what is happening (one line each). */
  say: (line: string) => void;
  /** Aborted: the faults stop, everything is healed and stopped, and the run fails. */
  signal?: AbortSignal;
}

export interface CampaignResult {
  faults: ExecutedFault[];
  checked: CheckResult;
  /** Anomalies found outside the clients' records: bans, relays not ready at the end. */
  anomalies: Anomaly[];
  final: FinalState;
  probes: Probes;
  history: History;
  workloadMs: number;
  ops: WriteOp[];
  clients: ClientRecord[];
}

/** What every relay process runs with (NATS_URL, PORT and RELAY_NODE_ID are each process's own). */
function relayEnv(directUrls: string): Record<string, string> {
  return {
    NATS_URL: directUrls,
    STREAM_REPLICAS: '3',
    KV_REPLICAS: '3',
    // Reserved on each node's store (nats-nodes.ts): bounds that fit its disk and a half-hour log.
    STREAM_MAX_BYTES: '128MiB',
    // Every entry of the run stays to be checked: the default keeps 10,000 a channel, which the
    // half-hour form passes (a 30-minute run saw its first 114,000 entries aged out, counted as lost).
    STREAM_MAX_MSGS_PER_CHANNEL: '0',
    IDEMPOTENCY_MAX_BYTES: '32MiB',
    PROFILE_API_URL: 'offline',
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    // A paused gateway is taken for dead (and its claims swept) within the longer pauses.
    NODE_TIMEOUT: '5s',
    // The writers are few accounts posting steadily from one address: no throttling in the way.
    RATE_LIMIT_PER_SECOND: '0',
    RATE_LIMIT_BYTES_PER_SECOND: '0',
  };
}

const MINUTE = 60_000;

export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const logDir = join(o.outDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const stops: Array<() => Promise<void>> = [];
  try {
    o.say('starting three NATS nodes behind proxies...');
    const nats = await ChaosNats.start(join(o.outDir, 'nats'), logDir, o.natsServer);
    stops.push(() => nats.stop());
    if (nats.diskProblem !== null) o.say(`no disk-full faults: ${nats.diskProblem}`);
    const env = relayEnv(nats.directUrls);
    const key = await prepareCluster(env);
    o.say(`cluster prepared; starting ${o.gateways} gateways and ${o.ingresses} ingresses...`);
    const fleet = new RelayFleet(env, nats.slots.map((s) => s.clientPort), logDir);
    stops.push(() => fleet.stop());
    for (let i = 0; i < o.gateways; i++) await fleet.add('gateway');
    for (let i = 0; i < o.ingresses; i++) await fleet.add('ingress');

    const history = new History();
    const crashes: Anomaly[] = [];
    const crashed = (who: string, how: string): void => {
      crashes.push({ class: 'crash', t: history.now(), subjects: [who], text: `${who} exited on its own: ${how}` });
      history.record('fault', who, `exited on its own (${how}); started again`);
      o.say(`${who} exited on its own: ${how}`);
    };
    nats.onCrash = crashed;
    fleet.onCrash = crashed;
    const workload = new Workload({ ...o, seed: o.seed }, fleet, key, history);
    stops.push(async () => workload.stop());
    await workload.start();
    const probes = new Probes(nats, fleet, history);
    probes.start();
    const runMs = o.minutes * MINUTE;
    const faults = planFaults(o.seed, runMs, { nats: nats.slots.length, gateways: o.gateways, ingresses: o.ingresses }, o.kinds);
    o.say(`workload running: ${workload.writers.length} writers, ${workload.readers.length} readers; ${faults.length} faults planned over ${o.minutes} min (seed ${o.seed})`);
    const nemesis = new Nemesis({ nats, fleet, history, random: Random.derive(o.seed, 'nemesis'), takeOver: (g) => workload.takeOver(g) });
    const progress = setInterval(() => {
      const acked = workload.ops().filter((op) => op.outcome === 'ok').length;
      o.say(`${(history.now() / 1000).toFixed(0)} s: ${nemesis.executed.length} faults, ${acked} acknowledged POSTs`);
    }, MINUTE);
    o.signal?.addEventListener('abort', () => nemesis.stop());
    await nemesis.run(faults, runMs);
    if (!(o.signal?.aborted ?? false)) await new Promise((r) => setTimeout(r, Math.max(0, runMs - history.now())));
    clearInterval(progress);
    if (o.signal?.aborted ?? false) throw new Error('interrupted');
    const workloadMs = history.now();

    o.say('healed; quiet period: writers finish, relays become ready, readers catch up...');
    history.record('note', 'campaign', 'every fault healed: quiet period');
    await workload.quiesce(60_000);
    await untilQuiet(fleet, 60_000);
    const final = await readFinalState(nats.slots.map((s) => ({ name: s.name, url: `nats://127.0.0.1:${s.clientPort}` })));
    const lastByChannel = new Map<string, number>();
    for (const e of final.log) lastByChannel.set(e.channel, e.seq);
    await workload.caughtUp((c) => lastByChannel.get(c) ?? 0, 90_000);
    await probes.stop();
    const checked = check({ ops: workload.ops(), clients: workload.clients(), log: final.log, faults: nemesis.executed });
    const anomalies: Anomaly[] = checkReplicas(final.leader, final.replicas, workload.ops(), history.now());
    anomalies.push(...crashes);
    anomalies.push(...final.banned.map((uuid): Anomaly => ({ class: 'banned', t: history.now(), subjects: [], text: `account ${uuid} was banned during the run` })));
    for (const s of fleet.slots) {
      const r = await fleet.readiness(s);
      if (r.status !== 200) anomalies.push({ class: 'unready', t: history.now(), subjects: [s.nodeId], text: `${s.nodeId} answers /readyz ${r.status}: ${r.body.slice(0, 200)}` });
    }
    history.record('note', 'campaign', 'checked');
    // The stores as they are, for a look by hand (they live on disks unmounted at the end).
    if (checked.anomalies.length + anomalies.length > 0) nats.copyStores(join(o.outDir, 'stores'));
    return { faults: nemesis.executed, checked, anomalies, final, probes, history, workloadMs, ops: workload.ops(), clients: workload.clients() };
  } finally {
    for (const stop of stops.reverse()) await stop().catch((e: unknown) => o.say(`while stopping: ${String(e)}`));
  }
}

/** Every relay ready and no POST in flight on any ingress (so the log read next is the final one). */
async function untilQuiet(fleet: RelayFleet, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const states = await Promise.all(
      fleet.slots.map(async (s) => {
        if ((await fleet.readiness(s)).status !== 200) return false;
        if (s.role !== 'ingress') return true;
        const text = await fleet.metrics(s);
        return text !== null && sum(text, 'relay_posts_in_flight') === 0;
      }),
    );
    if (states.every(Boolean)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}
