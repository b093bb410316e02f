// Each NATS role's permissions, made from the layout (nats-layout.ts), so a stream or subject is
// named once: `infra/nats/permissions.conf` (a mesh without regions) and, per region, what
// `relay nats-permissions` prints are written from here (`npm run nats-permissions`, scripts/generate-nats-permissions.ts), and
// test/nats-role-permissions.test.ts and test/mesh/regions-permissions.test.ts prove them against
// real nats-servers. Each role may do only what its service does; only the operator's `cli` creates
// or updates a stream, nobody deletes or purges one, and each role hears replies only under its own
// inbox prefix.
//
// Subject permissions alone do not hold: NATS does not check a message's reply subject, and
// JetStream answers (an ack, an API response, a direct get's stored message) with its account's
// rights, so a role sharing JetStream's account could aim an answer at `$JS.API.STREAM.PURGE.*` or
// at another role's KV keys. So the internet-facing roles each have an account of their own, with
// no JetStream: what they publish to JetStream goes through service imports, whose answers NATS
// routes back into the importer's account whatever reply subject was asked for. No such role may
// create a consumer: a consumer's deliver subject is JetStream's account's, so it follows a bucket
// by its change feed (subjects.ts kvFeedSubject) and reads the log by leader gets.

import type { StreamPlan } from './nats-layout.js';
import { kvStream, kvSubject } from './kv-internals.js';
import { credentialPlaces, type CredentialPlaces } from './credential-places.js';
import { plansFor } from './nats-layout.js';
import { operatorLogs } from './operator-logs.js';
import {
  AUDIT_STREAM_NAME,
  AUDIT_SUBJECTS,
  bansBucket,
  BUCKET_BANS,
  BUCKET_KEYS,
  BUCKET_NODES,
  BUCKET_STREAMS,
  claimIndex,
  claimsBucket,
  CLAIM_NOTICE_PREFIX,
  FEED_BUCKETS,
  idempotencyBucket,
  inboxPrefix,
  kvFeedSubject,
  LIVE_ALL_CHANNELS,
  nodesBucket,
  regionClaimsSubject,
  liveInEveryRegion,
  OWNER_CENSUS_ANSWER_PREFIX,
  OWNER_CENSUS_ASK,
  regionSubjects,
  STREAM_SUBJECTS,
  writtenLog,
  type NatsRole,
} from './subjects.js';

export type PermissionRole = Exclude<NatsRole, 'all'>;
/** Every role with a NATS user in a permissions file: each needs its RELAY_NATS_<ROLE>_PASSWORD. */
export const PERMISSION_ROLES: readonly PermissionRole[] = ['ingress', 'gateway', 'admin', 'cli'];

/** The account JetStream lives in, with the operator's roles. */
export const JETSTREAM_ACCOUNT = 'RELAY';

export interface RolePermissions {
  role: PermissionRole;
  /** JETSTREAM_ACCOUNT, or an account of the role's own that imports from it what `publish` and `subscribe` name. */
  account: string;
  /** Subjects the role's users publish and hear among themselves, in their own account (imported from nowhere). */
  internal: string[];
  /** Why the role may do what it may, for the file's reader. */
  comment: string;
  /** Subjects it may publish to, a line of the file each group. */
  publish: string[][];
  subscribe: string[];
}

const api = (verb: string, ...streams: string[]): string[] => streams.map((s) => `$JS.API.${verb}.${s}`);
/** Direct gets of any subject of each stream. */
const directGets = (...streams: string[]): string[] => streams.map((s) => `$JS.API.DIRECT.GET.${s}.>`);
/** Reading a whole stream by direct gets, one entry after another (kv-copy-read.ts), and any subject's last entry. */
const walks = (...streams: string[]): string[] => streams.flatMap((s) => [`$JS.API.DIRECT.GET.${s}`, `$JS.API.DIRECT.GET.${s}.>`]);
/** A KV watch: an ordered push consumer, created, replaced and deleted, and its flow control. */
const kvWatch = (bucket: string): string[] => [
  ...api('CONSUMER.CREATE', kvStream(bucket), `${kvStream(bucket)}.>`),
  `$JS.API.CONSUMER.DELETE.${kvStream(bucket)}.*`,
  `$JS.FC.${kvStream(bucket)}.>`,
];
/** Reading a stream with an ordered pull consumer (the log reader, the claim index, the audit trail). */
const streamRead = (stream: string): string[] => [
  ...api('CONSUMER.CREATE', stream, `${stream}.>`),
  ...api('CONSUMER.INFO', `${stream}.*`),
  ...api('CONSUMER.DELETE', `${stream}.*`),
  ...api('CONSUMER.MSG.NEXT', `${stream}.*`),
];
/** Reads a stream's messages from its leader, one request each (the log walk, a bucket's first load). */
const leaderGets = (...streams: string[]): string[] => streams.map((s) => `$JS.API.STREAM.MSG.GET.${s}`);
/** A bucket followed by its change feed: listed (STREAM.INFO), its keys read from the leader, then heard. */
const feeds = (...buckets: string[]): string[] => buckets.map((b) => kvFeedSubject(b, '>'));
const auto = (role: PermissionRole, region: string | null): string => kvSubject(bansBucket(region), `auto.${role}.*`);
const heartbeats = (role: PermissionRole, region: string | null): string => kvSubject(nodesBucket(region), `${role}.*`);

/**
 * The roles of a mesh without regions (`region` null), or of one region's servers: there, the ingress
 * may write only to its region's log and records, and the gateway reads its region's log and copies;
 * the operator's tools (the admin service, the CLI) read and write as the home region wherever they run.
 */
export function rolePermissions(layout: readonly StreamPlan[], region: string | null): RolePermissions[] {
  const log = writtenLog(region).stream;
  const logSubjects = region === null ? STREAM_SUBJECTS : regionSubjects(region);
  const idempotency = idempotencyBucket(region);
  // What opening a stream needs is the region's own (nats-layout.ts ownership).
  const nodes = nodesBucket(region);
  const claims = claimsBucket(region);
  const index = claimIndex(region);
  // The operator's CLI reads every region's claims and heartbeats.
  const regionNames = layout.flatMap((p) => (p.bucket !== undefined && p.bucket.startsWith(`${BUCKET_STREAMS}-`) ? [p.bucket.slice(BUCKET_STREAMS.length + 1)] : []));
  const everyRegion = region === null ? [null] : regionNames;
  // Where the keys and bans are read (credential-places.ts): with regions, streams of this region
  // read by direct gets (the CLI reads as the home region); without, the buckets, listed and read
  // from their leaders. Every bans bucket may be written by the operator (a lift reaches each).
  const home = layout.find((p) => p.bucket === BUCKET_KEYS)?.region ?? null;
  const regions = region === null || home === null ? null : { all: regionNames, home };
  const places = (at: string | null): CredentialPlaces => credentialPlaces(regions === null ? null : { ...regions, here: at });
  const credentialReads = (at: string | null): string[][] => {
    const p = places(at);
    const buckets = [p.keys, ...p.bans];
    if (regions === null) return [leaderGets(...buckets.map((b) => kvStream(b.bucket))), directGets(...buckets.map((b) => kvStream(b.bucket)))];
    // A bucket without a stream to read it from here is read from its leader (the operator's tools).
    const copies = buckets.flatMap((b) => (b.readFrom === undefined ? [] : [b.readFrom]));
    return [leaderGets(...new Set([kvStream(BUCKET_KEYS), ...buckets.filter((b) => b.readFrom === undefined).map((b) => kvStream(b.bucket))])), walks(...copies)];
  };
  const credentialInfo = (at: string | null): string[] => [places(at).keys, ...places(at).bans].map((b) => b.readFrom ?? kvStream(b.bucket));
  const credentialFeeds = feeds(BUCKET_KEYS, ...places(region).bans.map((b) => b.bucket));
  const everyBansBucket = places(null).bans.map((b) => b.bucket);
  const ingress: RolePermissions = {
    role: 'ingress',
    account: 'INGRESS',
    internal: [],
    comment: 'Ingress: publishes payloads; follows keys and bans; keeps Idempotency-Key records, its heartbeats and the bans of cracked clients it finds.',
    publish: [
      ['$JS.API.INFO'],
      [...api('STREAM.INFO', log, ...credentialInfo(region), kvStream(nodes), kvStream(idempotency))],
      ...credentialReads(region),
      directGets(kvStream(idempotency)),
      [logSubjects, kvSubject(idempotency, '>'), heartbeats('ingress', region), auto('ingress', region)],
    ],
    subscribe: [`${inboxPrefix('ingress')}.>`, ...credentialFeeds],
  };
  // The operator's tools (the CLI, the admin service) read and write as the home region wherever they
  // run: every region's log as the home region holds it (operator-logs.ts), the keys and bans from its
  // streams, every region's claims and heartbeats, and the audit trail.
  const operatorLogStreams = operatorLogs(regions === null ? null : { ...regions, here: null }).map((l) => l.stream);
  const operatorReads: string[][] = [
    ...operatorLogStreams.map(streamRead),
    ...credentialReads(null),
    // A lift reads each region's bans from its leader (bans.ts unban).
    [...leaderGets(...everyRegion.map(nodesBucket).map(kvStream)), ...(regions === null ? [] : [...leaderGets(...everyBansBucket.map(kvStream)), ...walks(...everyRegion.map(nodesBucket).map(kvStream))])],
    streamRead(AUDIT_STREAM_NAME),
    everyRegion.flatMap((r) => kvWatch(claimsBucket(r))),
    [kvSubject(BUCKET_KEYS, '>'), ...everyBansBucket.map((b) => kvSubject(b, '>')), AUDIT_SUBJECTS],
  ];
  const operatorFeeds = feeds(BUCKET_KEYS, ...everyBansBucket, ...everyRegion.map(nodesBucket));
  const cli: RolePermissions = {
    role: 'cli',
    account: JETSTREAM_ACCOUNT,
    internal: [],
    comment: "The operator (the relay CLI): what the admin service may do, and `relay setup`: create the relay's streams and buckets and change their limits. Keep this user off internet-facing hosts.",
    publish: [
      ['$JS.API.INFO'],
      ...['STREAM.INFO', 'STREAM.CREATE', 'STREAM.UPDATE'].map((verb) => api(verb, ...layout.map((p) => p.stream))),
      // relay trace reads one entry of a log from its leader.
      [...leaderGets(...operatorLogStreams), ...(region === null ? directGets(log) : [])],
      ...operatorReads,
    ],
    subscribe: [`${inboxPrefix('cli')}.>`, ...operatorFeeds],
  };
  const census = [OWNER_CENSUS_ASK, `${OWNER_CENSUS_ANSWER_PREFIX}*`];
  // Claims told to the other regions' gateways, and heard from them (gateway/ownership/region-claims.ts).
  // The sender's region is in the subject: a region's credential speaks only as that region.
  const announce = region === null ? [] : regionNames.filter((r) => r !== region).map((to) => regionClaimsSubject(to, region));
  const hear = region === null ? [] : [regionClaimsSubject(region, '*')];
  // With regions the gateway reads its region's log and its copies of the others', and asks each other
  // region's log for its newest sequence (gateway/region-links.ts); without, the one log.
  const logs = layout.filter((p) => p.bucket === undefined && p.copies === undefined && p.region !== undefined);
  const reads = region === null ? [log] : logs.filter((p) => p.region === region).map((p) => p.stream);
  const origins = logs.filter((p) => p.region !== region && p.usedBy.includes('ingress')).map((p) => p.stream);
  const gateway: RolePermissions = {
    role: 'gateway',
    account: 'GATEWAY',
    internal: [`${CLAIM_NOTICE_PREFIX}>`, ...census, ...announce, ...hear],
    comment: 'Gateway: streams to clients from the live subjects and the event log; holds stream claims, its claim index and notices, asks and answers the owner census (the stream caps), writes its heartbeats and the bans it issues.',
    publish: [
      ['$JS.API.INFO'],
      api('STREAM.INFO', ...reads, index.stream, ...credentialInfo(region), kvStream(claims), kvStream(nodes)),
      leaderGets(...reads, ...origins, index.stream, kvStream(claims), kvStream(nodes)),
      ...credentialReads(region),
      // With regions, its log and copies also by direct gets: a region cut off refuses leader gets (core/log-walk.ts).
      [...directGets(...(region === null ? [log] : []), kvStream(claims)), ...(region === null ? [] : walks(kvStream(nodes), ...reads.filter((st) => st !== index.stream)))],
      [kvSubject(claims, '>'), heartbeats('gateway', region), auto('gateway', region), `${index.prefix}>`],
      [`${CLAIM_NOTICE_PREFIX}>`, ...census, ...announce],
    ],
    subscribe: [`${inboxPrefix('gateway')}.>`, region === null ? LIVE_ALL_CHANNELS : liveInEveryRegion(STREAM_SUBJECTS), ...credentialFeeds, ...feeds(nodes), `${CLAIM_NOTICE_PREFIX}>`, ...census, ...hear],
  };
  const comment = 'Admin service (the console and its API): keys, bans and the audit trail; reads the event log, the audit trail, the claims and the heartbeats. It starts against what exists, like the others.';
  const admin: RolePermissions =
    region === null
      ? {
          role: 'admin',
          account: JETSTREAM_ACCOUNT,
          internal: [],
          comment,
          publish: [
            ['$JS.API.INFO'],
            api('STREAM.INFO', log, AUDIT_STREAM_NAME, kvStream(BUCKET_KEYS), kvStream(BUCKET_BANS), kvStream(BUCKET_STREAMS), kvStream(BUCKET_NODES)),
            leaderGets(...FEED_BUCKETS.map(kvStream)),
            directGets(log, kvStream(BUCKET_KEYS), kvStream(BUCKET_BANS)),
            streamRead(log),
            streamRead(AUDIT_STREAM_NAME),
            kvWatch(BUCKET_STREAMS),
            [kvSubject(BUCKET_KEYS, '>'), kvSubject(BUCKET_BANS, '>'), AUDIT_SUBJECTS],
          ],
          subscribe: [`${inboxPrefix('admin')}.>`, LIVE_ALL_CHANNELS, ...feeds(...FEED_BUCKETS)],
        }
      : {
          role: 'admin',
          account: JETSTREAM_ACCOUNT,
          internal: [],
          comment: `${comment} With regions it reads and writes as the home region, and reads every region's claims and heartbeats.`,
          publish: [
            ['$JS.API.INFO'],
            // What it checks at start (as the home region), and every region's claims and heartbeats.
            api('STREAM.INFO', ...new Set([...plansFor([...layout], 'admin', home).map((p) => p.stream), ...everyRegion.flatMap((r) => [kvStream(claimsBucket(r)), kvStream(nodesBucket(r))])])),
            ...operatorReads,
          ],
          subscribe: [`${inboxPrefix('admin')}.>`, liveInEveryRegion(STREAM_SUBJECTS), ...operatorFeeds],
        };
  return [ingress, gateway, admin, cli];
}
