// NATS names shared by every service: the stream, its subjects, the live RePublish subjects and the
// KV buckets. Nothing else spells a subject.

import { channelToken } from './channel.js';
import { kvStream } from './kv-internals.js';

export const STREAM_NAME = 'RELAY';
export const CHANNEL_SUBJECT_PREFIX = 'channel.';
export const STREAM_SUBJECTS = 'channel.>';
/** The stream RePublishes every stored message here; gateways hold core subscriptions on it. */
export const LIVE_PREFIX = 'live.';
export const LIVE_ALL_CHANNELS = 'live.channel.>';

/** Operators' actions (keys created or revoked, bans added or lifted), one subject per action. */
export const AUDIT_STREAM_NAME = 'RELAY_AUDIT';
export const AUDIT_SUBJECTS = 'audit.>';

export const BUCKET_KEYS = 'relay-keys';
export const BUCKET_BANS = 'relay-bans';
export const BUCKET_STREAMS = 'relay-streams';
export const BUCKET_NODES = 'relay-nodes';
export const BUCKET_IDEMPOTENCY = 'relay-idempotency';

/**
 * The buckets with a change feed: their stream republishes every stored entry to
 * `relay.kv.<bucket>.<key>`, so a role without the right to create consumers (which would let it aim
 * a consumer's deliveries at any subject of the JetStream account) can still follow them.
 */
export const FEED_BUCKETS: readonly string[] = [BUCKET_KEYS, BUCKET_BANS, BUCKET_NODES];
const KV_FEED_PREFIX = 'relay.kv.';

/** Whether a bucket has a change feed: one of FEED_BUCKETS, or a region's heartbeats or bans (nodesBucket, bansBucket). */
export function hasFeed(bucket: string): boolean {
  return FEED_BUCKETS.includes(bucket) || bucket.startsWith(`${BUCKET_NODES}-`) || bucket.startsWith(`${BUCKET_BANS}-`);
}

/** The subject a bucket's change feed carries `key` on (`>`: every key). */
export function kvFeedSubject(bucket: string, key: string): string {
  return `${KV_FEED_PREFIX}${bucket}.${key}`;
}

export function channelSubject(channel: string): string {
  return CHANNEL_SUBJECT_PREFIX + channelToken(channel);
}

export function liveSubject(channel: string): string {
  return LIVE_PREFIX + channelSubject(channel);
}

// With regions (docs/REGIONS.md): each region's own log, on subjects of its own, and a copy of it in
// every other region. Region names are lower case without "_" (schemas/event-id.ts), so upper-casing
// them and joining with "_" names each stream once, and none can be a stream of the one-log layout.

/** Region `region`'s own log. */
export function regionLogStream(region: string): string {
  return `${STREAM_NAME}_REGION_${region.toUpperCase()}`;
}

/** The copy (a mirror, with the origin's sequences) of `origin`'s log kept in region `at`. */
export function regionCopyStream(origin: string, at: string): string {
  return `${regionLogStream(origin)}_AT_${at.toUpperCase()}`;
}

/** What a region's log stores under: this, then the subject a mesh without regions would use. */
export function regionSubjectPrefix(region: string): string {
  return `region.${region}.`;
}

/** Every subject of a region's log. */
export function regionSubjects(region: string): string {
  return regionSubjectPrefix(region) + STREAM_SUBJECTS;
}

/** Where a region's ingresses store a channel's payloads. */
export function regionChannelSubject(region: string, channel: string): string {
  return regionSubjectPrefix(region) + channelSubject(channel);
}

/** The live subjects of every region's log for one subject of the one-log form (`channel.<token>`, `channel.>`). */
export function liveInEveryRegion(subject: string): string {
  return `${LIVE_PREFIX}${regionSubjectPrefix('*')}${subject}`;
}

/** Idempotency-Key records are per region: a write there never waits for another region. */
export function idempotencyBucket(region: string | null): string {
  return region === null ? BUCKET_IDEMPOTENCY : `${BUCKET_IDEMPOTENCY}-${region}`;
}

// What a gateway needs to open a stream lives in its own region (docs/REGIONS.md, "One stream per
// (account, channel)"): its claims, its heartbeats and its claim index, so a region cut off from the
// others still opens streams. Null: a mesh without regions.

/** The stream claims of `region`'s gateways. */
export function claimsBucket(region: string | null): string {
  return region === null ? BUCKET_STREAMS : `${BUCKET_STREAMS}-${region}`;
}

/** The heartbeats of `region`'s processes (liveness, and so the sweeps, stay within a region). */
export function nodesBucket(region: string | null): string {
  return region === null ? BUCKET_NODES : `${BUCKET_NODES}-${region}`;
}

// Keys and bans across regions (docs/REGIONS.md, "Keys, bans and revocations"): the keys live in
// the home region, each region's bans (those its services issue; the home region's also hold the
// operators') in it, and every region keeps a copy of each it does not hold, read there by direct
// gets, which a region cut off from the others still answers.

/** The bans written in `region` (null: the one bucket of a mesh without regions). */
export function bansBucket(region: string | null): string {
  return region === null ? BUCKET_BANS : `${BUCKET_BANS}-${region}`;
}

/** The copy (a mirror, with the origin's revisions) of `bucket` kept in region `at`. */
export function bucketCopyStream(bucket: string, at: string): string {
  return `RELAY_COPY_${bucket}_AT_${at.toUpperCase()}`;
}

/** The stream region `here` reads `bucket` from, the bucket being kept in region `origin`. */
export function localStreamOf(bucket: string, origin: string, here: string): string {
  return origin === here ? kvStream(bucket) : bucketCopyStream(bucket, here);
}

/** Where `region`'s gateways note their claimed keys, one subject per node (the node id follows `prefix`). */
export function claimIndex(region: string | null): { stream: string; prefix: string } {
  if (region === null) return { stream: CLAIM_INDEX_STREAM, prefix: CLAIM_INDEX_PREFIX };
  return { stream: `${CLAIM_INDEX_STREAM}_${region.toUpperCase()}`, prefix: `${CLAIM_INDEX_PREFIX}${region}.` };
}

/** Claims written in one region, told to the others' gateways (regionClaimsSubject follows it with `<to>.<from>`). */
export const REGION_CLAIMS_PREFIX = 'relay.region-claims.';
/** Claims told by region `from`'s gateways to region `to`'s: the sender is in the subject, so a region's credential speaks only as it. */
export const regionClaimsSubject = (to: string, from: string): string => `${REGION_CLAIMS_PREFIX}${to}.${from}`;

/** The log a process in `region` (null: a mesh without regions) writes, and a channel's subject in it. */
export interface WrittenLog {
  stream: string;
  subject(channel: string): string;
}

export function writtenLog(region: string | null): WrittenLog {
  if (region === null) return { stream: STREAM_NAME, subject: channelSubject };
  return { stream: regionLogStream(region), subject: (channel) => regionChannelSubject(region, channel) };
}

/** Where a gateway hears that another node's claim replaced one of its streams' (the node id follows). */
export const CLAIM_NOTICE_PREFIX = 'relay.claim-notice.';
/** The keys of each gateway's claims, one subject per node, so a dead node's claims can be found. */
export const CLAIM_INDEX_STREAM = 'RELAY_CLAIM_INDEX';
export const CLAIM_INDEX_PREFIX = 'relay.claim-index.';
/** Where an opening stream's gateway asks the others how many streams its owner holds (the stream caps). */
export const OWNER_CENSUS_ASK = 'relay.owner-census.ask';
/** Where a gateway hears the answers to its census questions (the node id follows). */
export const OWNER_CENSUS_ANSWER_PREFIX = 'relay.owner-census.answer.';

/** The NATS users of the relay's roles (infra/nats/permissions.conf); `all` is the development all-in-one. */
export type NatsRole = 'ingress' | 'gateway' | 'admin' | 'cli' | 'all';

/**
 * Where a role's replies come: each role subscribes only under its own prefix, so a stolen
 * credential of one role cannot read the answers JetStream sends another (claims, log reads, keys).
 */
export function inboxPrefix(role: NatsRole): string {
  return `_INBOX.${role}`;
}
