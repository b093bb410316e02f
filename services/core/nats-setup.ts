// `relay setup`: creates every stream and bucket the relay needs and brings existing ones to the
// operator's settings (nats-layout.ts), with the operator's NATS credentials. It is the only code
// that creates or updates a stream: ingress, gateway and admin service start against what exists
// (nats-check.ts), so their credentials need no such permission. Idempotent: a second run changes
// nothing and says so. Data is kept: only limits and the shape the services need are changed.

import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { isNoPlacement, isPlacementPeerOffline, isStreamNameInUse } from './jetstream-errors.js';
import { NatsSetupError } from './nats-refusal.js';
import type { Logger } from './logger.js';
import { connectNats, retry, type NatsConfig } from './nats.js';
import { copyShapeProblems, EVERY_STREAM, natsLayout, newStreamConfig, type StreamLimits, type StreamPlan } from './nats-layout.js';
import { LIMIT_NAMES, limitText } from './nats-limits-text.js';
import { FEED_REBUILD } from './bucket-rebuild.js';

export interface SetupOutcome {
  stream: string;
  label: string;
  action: 'created' | 'updated' | 'unchanged';
  /** One sentence per setting changed (or to change, in a dry run). */
  changes: string[];
  /** What setup cannot change in place, for the operator to decide. */
  notes: string[];
}

/** Fields that JetStream cannot change on an existing stream. */
const FIXED: ReadonlySet<keyof StreamLimits> = new Set(['storage']);

export interface SetupOptions {
  dryRun?: boolean;
  /** Told, once per stream, that its region's servers are offline to JetStream and setup waits for them. */
  onWait?: (sentence: string) => void;
}

export async function setupNats(jsm: JetStreamManager, layout: StreamPlan[], options: SetupOptions = {}): Promise<SetupOutcome[]> {
  const outcomes: SetupOutcome[] = [];
  for (const plan of layout) outcomes.push(await setupStream(jsm, plan, options));
  return outcomes;
}

async function setupStream(jsm: JetStreamManager, plan: StreamPlan, options: SetupOptions): Promise<SetupOutcome> {
  const dryRun = options.dryRun === true;
  const outcome: SetupOutcome = { stream: plan.stream, label: plan.label, action: 'unchanged', changes: [], notes: [] };
  const existing = await jsm.streams.info(plan.stream).catch((e: unknown) => {
    if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound) return null;
    throw e;
  });
  if (existing === null) {
    outcome.action = 'created';
    outcome.changes.push(`create ${plan.label}`);
    if (!dryRun) {
      await addStream(jsm, plan, options.onWait);
    }
    return outcome;
  }
  const current = existing.config;
  outcome.notes.push(...shapeNotes(plan, current));
  const patch: Partial<StreamConfig> = {};
  for (const field of Object.keys(plan.limits) as Array<keyof StreamLimits>) {
    const wanted = plan.limits[field];
    // A mirror's duplicate window is not reported at all (it has none): read as 0, as its plan says.
    const has = current[field] ?? 0;
    if (has === wanted) continue;
    const source = plan.sources[field] !== undefined ? ` (${plan.sources[field]})` : '';
    const change = `${LIMIT_NAMES[field]} ${limitText(field, has)} -> ${limitText(field, wanted)}${source}`;
    if (FIXED.has(field)) {
      outcome.notes.push(`${plan.label}: ${change} cannot be applied in place; kept ${limitText(field, has)}.`);
      continue;
    }
    outcome.changes.push(change);
    Object.assign(patch, { [field]: wanted });
  }
  for (const change of shapeChanges(plan, current)) {
    outcome.changes.push(change.sentence);
    Object.assign(patch, change.patch);
  }
  if (outcome.changes.length === 0) return outcome;
  outcome.action = 'updated';
  if (!dryRun) await jsm.streams.update(plan.stream, { ...current, ...patch });
  return outcome;
}

function noRoomIn(plan: StreamPlan, region: string): string {
  const replicas = plan.limits.num_replicas;
  return `${plan.label} cannot be placed in region ${region}: JetStream has no ${replicas === 1 ? 'server' : `${replicas} servers`} with JetStream in a NATS cluster named ${JSON.stringify(region)}. Each region of REGIONS is a cluster of that name in one super-cluster (docs/REGIONS.md); check the servers' cluster names and gateways.`;
}

/** How long a region whose servers JetStream knows but sees offline is waited for before setup gives up. */
const PEERS_ONLINE_WAIT_MS = 45_000;

async function addStream(jsm: JetStreamManager, plan: StreamPlan, onWait: SetupOptions['onWait']): Promise<void> {
  const region = plan.shape.placement?.cluster;
  const deadline = Date.now() + PEERS_ONLINE_WAIT_MS;
  for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      await jsm.streams.add(newStreamConfig(plan));
      return;
    } catch (e) {
      // Created meanwhile by another setup.
      if (isStreamNameInUse(e)) return;
      if (region === undefined || !isNoPlacement(e)) throw e;
      const offline = isPlacementPeerOffline(e);
      // A super-cluster just started (or a region restarting): its servers come online in seconds.
      if (offline && Date.now() + wait < deadline) {
        if (wait === 250) onWait?.(`${plan.label} waits for region ${region}: JetStream sees its servers offline (starting, or shut down); up to ${PEERS_ONLINE_WAIT_MS / 1000} s.`);
        await new Promise((r) => setTimeout(r, wait));
        continue;
      }
      throw new NatsSetupError(offline ? offlineIn(plan, region) : noRoomIn(plan, region), e);
    }
  }
}

function offlineIn(plan: StreamPlan, region: string): string {
  return `${plan.label} cannot be placed in region ${region}: JetStream has seen its servers offline for ${PEERS_ONLINE_WAIT_MS / 1000} s. Start them (or check the gateways between the regions) and run setup again.`;
}

/** What the services need of the stream's shape that it lacks, and can be changed in place. */
function shapeChanges(plan: StreamPlan, current: StreamConfig): Array<{ sentence: string; patch: Partial<StreamConfig> }> {
  const out: Array<{ sentence: string; patch: Partial<StreamConfig> }> = [];
  const { shape } = plan;
  const missing = shape.subjects.filter((s) => !(current.subjects ?? []).includes(s));
  if (missing.length > 0) out.push({ sentence: `subjects: add ${missing.join(', ')}`, patch: { subjects: [...(current.subjects ?? []), ...missing] } });
  if (shape.allow_direct === true && current.allow_direct !== true) out.push({ sentence: 'allow direct gets', patch: { allow_direct: true } });
  if (current.allow_rollup_hdrs === true) out.push({ sentence: 'refuse roll-up headers (one publish could erase every subject)', patch: { allow_rollup_hdrs: false } });
  if (current.max_msg_size !== undefined && current.max_msg_size > 0) out.push({ sentence: `max message size ${current.max_msg_size} -> unbounded`, patch: { max_msg_size: EVERY_STREAM.max_msg_size } });
  return out;
}

/** What setup cannot mend in place. */
function shapeNotes(plan: StreamPlan, current: StreamConfig): string[] {
  const notes: string[] = [];
  if (current.sealed) notes.push(`${plan.label} is sealed, and JetStream cannot unseal a stream: restore it from a backup, or remove it and run relay setup again.`);
  const remake = 'and JetStream cannot change that in place: remove the stream (what it holds goes with it) and run relay setup again.';
  const r = plan.shape.republish;
  // nats-server 2.9 refuses to change a stream's RePublish ("can not change RePublish").
  if (r !== undefined && (current.republish?.src !== r.src || current.republish.dest !== r.dest || current.republish.headers_only === true)) {
    notes.push(plan.bucket !== undefined ? `${plan.label} has no change feed (${r.dest}), ${FEED_REBUILD}` : `${plan.label} does not republish ${r.src} to ${r.dest} with the payloads, ${remake}`);
  }
  if (current.retention !== EVERY_STREAM.retention) notes.push(`${plan.label} keeps messages by ${current.retention}, not by limits, ${remake}`);
  notes.push(...copyShapeProblems(plan, current).map((problem) => `${plan.label} ${problem}, ${remake}`));
  const cluster = plan.shape.placement?.cluster;
  // JetStream 2.9 would move the stream's data between clusters: the operator's decision, not setup's.
  if (cluster !== undefined && current.placement?.cluster !== cluster) {
    notes.push(`${plan.label} is placed ${current.placement?.cluster === undefined ? 'in no region' : `in region ${current.placement.cluster}`}, not in region ${cluster}; setup leaves it where it is.`);
  }
  return notes;
}

/** Connects as the operator, sets up every stream and bucket, and disconnects; retries while JetStream settles. */
export async function setUpFromConfig(config: NatsConfig, logger: Logger, options: { dryRun?: boolean; failFast?: boolean } = {}): Promise<SetupOutcome[]> {
  const nc = await connectNats(config, 'relay-setup', logger, { role: 'cli', ...(options.failFast === true ? { failFast: true } : {}) });
  try {
    const jsm = await jetstreamManager(nc);
    return await retry(() => setupNats(jsm, natsLayout(config), { ...options, onWait: (sentence) => logger.warn(sentence) }), logger, options.failFast === true ? 3 : 40);
  } finally {
    await nc.close().catch(() => undefined);
  }
}
