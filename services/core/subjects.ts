// NATS names shared by every service: the stream, its subjects, the live RePublish subjects and the
// KV buckets. Nothing else spells a subject.

import { channelToken } from './channel.js';

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

export function channelSubject(channel: string): string {
  return CHANNEL_SUBJECT_PREFIX + channelToken(channel);
}

export function liveSubject(channel: string): string {
  return LIVE_PREFIX + channelSubject(channel);
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
