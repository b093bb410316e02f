// Every subject a NATS user could use against the relay's streams and buckets: each JetStream API
// verb on each stream, the account-wide verbs, the plain subjects the relay publishes on, and the
// subjects one might subscribe to. A probe asks the server and reports whether its permissions let
// the subject through; the request bodies are ones JetStream refuses, so an allowed probe changes
// nothing (except DELETE, which takes no body: a role allowed it fails its test anyway).

import { NoRespondersError, PermissionViolationError, TimeoutError, type NatsConnection } from '@nats-io/nats-core';
import { natsLayout, type StreamPlan } from '../../services/core/nats-layout.js';
import { loadConfig } from '../../services/core/config.js';
import { AUTO_BANNERS, banKey } from '../../services/core/bans.js';
import { heartbeatKey } from '../../services/core/node-heartbeat.js';
import { inboxPrefix, kvFeedSubject } from '../../services/core/subjects.js';

export interface Probe {
  /** How the table names it: "pub <subject>" or "sub <subject>". */
  name: string;
  kind: 'pub' | 'sub';
  subject: string;
  body?: string;
}

const ONE_LOG = natsLayout(loadConfig('all', {}));
const NOT_A_CONFIG = JSON.stringify({ name: 'NOT_THIS_STREAM' });

/** The verbs a stream answers, with a body JetStream refuses (so an allowed probe changes nothing). */
function streamVerbs(s: string, subject: string): Array<[string, string]> {
  return [
    [`$JS.API.STREAM.INFO.${s}`, ''],
    [`$JS.API.STREAM.CREATE.${s}`, NOT_A_CONFIG],
    [`$JS.API.STREAM.UPDATE.${s}`, NOT_A_CONFIG],
    [`$JS.API.STREAM.PURGE.${s}`, JSON.stringify({ filter: 'no.such.subject' })],
    [`$JS.API.STREAM.MSG.DELETE.${s}`, JSON.stringify({ seq: 999_999_999 })],
    [`$JS.API.STREAM.MSG.GET.${s}`, JSON.stringify({ seq: 999_999_999 })],
    [`$JS.API.STREAM.SNAPSHOT.${s}`, '{}'],
    [`$JS.API.STREAM.RESTORE.${s}`, '{}'],
    [`$JS.API.STREAM.LEADER.STEPDOWN.${s}`, ''],
    [`$JS.API.STREAM.PEER.REMOVE.${s}`, JSON.stringify({ peer: 'nobody' })],
    [`$JS.API.DIRECT.GET.${s}`, JSON.stringify({ seq: 999_999_999 })],
    [`$JS.API.DIRECT.GET.${s}.${subject}`, ''],
    [`$JS.API.CONSUMER.CREATE.${s}`, '{}'],
    [`$JS.API.CONSUMER.CREATE.${s}.probe`, '{}'],
    [`$JS.API.CONSUMER.CREATE.${s}.probe.${subject}`, '{}'],
    [`$JS.API.CONSUMER.DURABLE.CREATE.${s}.probe`, '{}'],
    [`$JS.API.CONSUMER.INFO.${s}.probe`, ''],
    [`$JS.API.CONSUMER.DELETE.${s}.probe`, ''],
    [`$JS.API.CONSUMER.MSG.NEXT.${s}.probe`, JSON.stringify({ batch: 1, no_wait: true })],
    [`$JS.API.CONSUMER.NAMES.${s}`, ''],
    [`$JS.API.CONSUMER.LIST.${s}`, ''],
    [`$JS.API.CONSUMER.LEADER.STEPDOWN.${s}.probe`, ''],
    [`$JS.FC.${s}.probe`, ''],
    [`$JS.ACK.${s}.probe`, ''],
    // Last: it takes no body, so a role wrongly allowed it really deletes (and fails its test).
    [`$JS.API.STREAM.DELETE.${s}`, ''],
  ];
}

/** A subject the stream takes, for the verbs that name one (a copy takes none of its own: 'probe'). */
function subjectOf(plan: StreamPlan): string {
  return plan.shape.subjects?.[0]?.replace(/>$/, 'probe') ?? 'probe';
}

/**
 * Every probe against a layout: the one log's by default; a mesh with regions' (`regions`) adds each
 * region's payload and live subjects, and what one might listen to of them.
 */
export function allProbes(layout: readonly StreamPlan[] = ONE_LOG, regions: readonly string[] = []): Probe[] {
  const buckets = layout.flatMap((p) => (p.bucket !== undefined ? [p.bucket] : []));
  const pub = (subject: string, body = ''): Probe => ({ name: `pub ${subject}`, kind: 'pub', subject, body });
  const sub = (subject: string): Probe => ({ name: `sub ${subject}`, kind: 'sub', subject });
  const deletes: Probe[] = [];
  const probes: Probe[] = [
    pub('$JS.API.INFO'),
    pub('$JS.API.STREAM.NAMES', '{}'),
    pub('$JS.API.STREAM.LIST', '{}'),
    pub('$JS.API.STREAM.CREATE.NOT_THE_RELAYS', NOT_A_CONFIG),
    pub('$JS.API.META.LEADER.STEPDOWN'),
    pub('$JS.API.SERVER.REMOVE', '{}'),
    pub('$JS.API.ACCOUNT.PURGE.probe'),
  ];
  for (const plan of layout) {
    for (const [subject, body] of streamVerbs(plan.stream, subjectOf(plan))) (subject.startsWith('$JS.API.STREAM.DELETE.') ? deletes : probes).push(pub(subject, body));
  }
  // What the relay publishes on: payloads, live frames (only the server RePublishes), the audit
  // trail, the claim notices and index, the owner census, and each bucket's keys, with the keys each role owns.
  probes.push(pub('channel.probe'), pub('live.channel.probe'), pub('audit.probe'), pub('relay.claim-notice.probe'), pub('relay.claim-index.probe'), pub('relay.owner-census.ask'), pub('relay.owner-census.answer.probe'), pub('relay.owner-census.probe'));
  for (const r of regions) {
    probes.push(pub(`region.${r}.channel.probe`), pub(`live.region.${r}.channel.probe`), sub(`region.${r}.channel.>`), sub(`live.region.${r}.channel.>`));
    probes.push(pub(`relay.claim-index.${r}.probe`), pub(`relay.region-claims.${r}`), sub(`relay.region-claims.${r}`), sub(`relay.region-claims.${r}.*`));
    // Claims told to region r as each region, r itself included.
    for (const from of regions) probes.push(pub(`relay.region-claims.${r}.${from}`), sub(`relay.region-claims.${r}.${from}`));
  }
  if (regions.length > 0) probes.push(sub('region.>'), sub('live.region.>'), sub('live.region.*.channel.>'), sub('relay.region-claims.*'), sub('relay.region-claims.>'), sub('relay.region-claims.*.*'));
  for (const b of buckets) probes.push(pub(`$KV.${b}.probe`));
  for (const b of buckets.filter((x) => x === 'relay-nodes' || x.startsWith('relay-nodes-'))) {
    for (const role of ['ingress', 'gateway', 'all']) probes.push(pub(`$KV.${b}.${heartbeatKey(role, 'probe')}`));
  }
  // Every bans bucket (one per region with regions): each issuer's keys and the operator's.
  for (const b of buckets.filter((x) => x === 'relay-bans' || x.startsWith('relay-bans-'))) {
    for (const issuer of [...AUTO_BANNERS, null]) probes.push(pub(`$KV.${b}.${banKey('00000000-0000-4000-8000-000000000000', issuer)}`));
  }
  // What one might listen to.
  for (const s of ['>', 'channel.>', 'live.channel.>', 'audit.>', 'relay.claim-notice.>', 'relay.claim-index.>', 'relay.owner-census.>', 'relay.owner-census.ask', 'relay.owner-census.answer.*', '$JS.API.>', '_INBOX.>', 'relay.kv.>']) probes.push(sub(s));
  for (const b of buckets) probes.push(sub(`$KV.${b}.>`), sub(kvFeedSubject(b, '>')));
  for (const role of ['ingress', 'gateway', 'admin', 'cli'] as const) probes.push(sub(`${inboxPrefix(role)}.>`));
  return [...probes, ...deletes];
}

// The probe names a table of what a role may do is written in.
export const apiNames = (verb: string, ...streams: string[]): string[] => streams.map((s) => `pub $JS.API.${verb}.${s}`);
/** Reading a bucket: its stream's information and a direct get. */
export const kvReadNames = (bucket: string): string[] => [`pub $JS.API.STREAM.INFO.KV_${bucket}`, `pub $JS.API.DIRECT.GET.KV_${bucket}.$KV.${bucket}.probe`];
/** Reading a bucket from its stream's leader and following its change feed (roles without consumers). */
export const kvFeedNames = (bucket: string): string[] => [`pub $JS.API.STREAM.INFO.KV_${bucket}`, `pub $JS.API.STREAM.MSG.GET.KV_${bucket}`, `sub ${kvFeedSubject(bucket, '>')}`];
/** Reading a whole stream by direct gets (a bucket, or its copy in another region: kv-copy-read.ts); `subject`, one it holds. */
export const walkNames = (stream: string, subject: string): string[] => [`pub $JS.API.STREAM.INFO.${stream}`, `pub $JS.API.DIRECT.GET.${stream}`, `pub $JS.API.DIRECT.GET.${stream}.${subject}`];
/** A KV watch: an ordered push consumer (created, replaced, deleted) and its flow control. */
export const kvWatchNames = (bucket: string): string[] => [
  `pub $JS.API.CONSUMER.CREATE.KV_${bucket}`,
  `pub $JS.API.CONSUMER.CREATE.KV_${bucket}.probe`,
  `pub $JS.API.CONSUMER.CREATE.KV_${bucket}.probe.$KV.${bucket}.probe`,
  `pub $JS.API.CONSUMER.DELETE.KV_${bucket}.probe`,
  `pub $JS.FC.KV_${bucket}.probe`,
];
/** Reading a stream with an ordered pull consumer (the log reader, the claim index, the audit trail). */
export const streamReadNames = (stream: string, subject: string): string[] => [
  `pub $JS.API.STREAM.INFO.${stream}`,
  `pub $JS.API.CONSUMER.CREATE.${stream}`,
  `pub $JS.API.CONSUMER.CREATE.${stream}.probe`,
  `pub $JS.API.CONSUMER.CREATE.${stream}.probe.${subject}`,
  `pub $JS.API.CONSUMER.INFO.${stream}.probe`,
  `pub $JS.API.CONSUMER.DELETE.${stream}.probe`,
  `pub $JS.API.CONSUMER.MSG.NEXT.${stream}.probe`,
];

/** Whether the server's permissions let the probe through (its answer, whatever it says, or silence). */
export async function permitted(nc: NatsConnection, probe: Probe): Promise<boolean> {
  if (probe.kind === 'sub') {
    const s = nc.subscribe(probe.subject, { callback: () => undefined });
    // The server answers a SUB it refuses with -ERR before it answers the PING of the flush.
    await nc.flush();
    const refused = s.isClosed();
    if (!refused) s.unsubscribe();
    return !refused;
  }
  try {
    await nc.request(probe.subject, probe.body ?? '', { timeout: 2000 });
    return true;
  } catch (e) {
    if (e instanceof PermissionViolationError || (e instanceof Error && e.cause instanceof PermissionViolationError)) return false;
    if (e instanceof NoRespondersError || e instanceof TimeoutError || (e instanceof Error && (e.cause instanceof NoRespondersError || e.cause instanceof TimeoutError))) return true;
    throw e;
  }
}
