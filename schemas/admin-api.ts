// The admin service's API (the operator's console talks to nothing else): every answer's shape and
// every refusal's code. The OpenAPI document (schemas/openapi.ts) describes it from these.

import { Type, type Static } from '@sinclair/typebox';
import { REGION_NAME_PATTERN } from './event-id.js';
import { LogEntry } from './log-entry.js';
import { AuditRecord, BanRecord, KeyRecord, StreamClaim } from './records.js';
import { PlainText } from './text.js';

/**
 * Every refusal of the admin API: the code carries its status, and `retryAfter` the seconds its
 * Retry-After says. Bodies are {error, message}. As on the client port, an operator over its own
 * share is told 429; a bound the whole service shares, or NATS, 503.
 */
export const ADMIN_ERRORS = {
  bad_request: { status: 400, when: 'A parameter or body member is missing or malformed; the message names it.' },
  absolute_form_refused: { status: 400, when: 'The request line names a whole URL (http://host/path); send the path alone.' },
  origin_not_allowed: { status: 403, when: 'A change sent by a page of another site (Origin or Sec-Fetch-Site says so).' },
  forbidden: { status: 403, when: 'The path names something never served (a dot segment or hidden file).' },
  request_timeout: { status: 408, when: 'The request headers did not arrive within 10 s, or the whole request within 30 s; the connection is closed.' },
  headers_too_large: { status: 431, when: "The request headers are larger than 16 KiB (Node's bound); the connection is closed." },
  payload_too_large: { status: 413, when: 'The body is larger than the admin API reads (64 KiB).' },
  unsupported_media_type: { status: 415, when: 'The body is not application/json.' },
  host_not_allowed: { status: 421, when: 'The Host header is none of the names this admin service answers to (ADMIN_HOST, ADMIN_ALLOWED_HOSTS, loopback).' },
  admin_token_required: { status: 401, when: 'No Authorization: Bearer <admin token> header.' },
  admin_token_invalid: { status: 401, when: 'The bearer token is not one of the admin tokens.' },
  not_found: { status: 404, when: 'No such route, key or ban.' },
  too_many_tails: { status: 429, when: 'This operator already follows 16 live tails, its share; close one first.', retryAfter: 10 },
  tails_busy: { status: 503, when: 'This admin service already follows 64 live tails, all operators together; close one first.', retryAfter: 10 },
  unavailable: { status: 503, when: 'NATS cannot be reached right now.', retryAfter: 1 },
  audit_not_recorded: { status: 503, when: 'The action took effect but its audit record could not be written; do not repeat it.' },
  internal_error: { status: 500, when: 'A fault inside the admin service (a bug).' },
} as const satisfies Record<string, { status: number; when: string; retryAfter?: number }>;
export type AdminErrorCode = keyof typeof ADMIN_ERRORS;

export const AdminErrorBody = Type.Object(
  {
    error: Type.Union(Object.keys(ADMIN_ERRORS).map((c) => Type.Literal(c))),
    message: Type.String(),
  },
  { description: 'The body of every admin refusal.' },
);
export type AdminErrorBody = Static<typeof AdminErrorBody>;

export const Session = Type.Object({
  /** The name of the token signed in with, as the audit trail records it. */
  name: Type.String(),
  version: Type.String(),
  /** Every scope a key can have, for the console's key form. */
  scopes: Type.Array(Type.String()),
});
export type Session = Static<typeof Session>;

const RegionOf = (what: string) => Type.Optional(Type.String({ pattern: REGION_NAME_PATTERN, description: `On a mesh with regions: the region of the ${what}. Absent without regions.` }));

export const NodeView = Type.Object({
  region: RegionOf('process (the one whose heartbeats bucket it writes)'),
  node: Type.String(),
  role: Type.String(),
  version: Type.Union([Type.String(), Type.Null()]),
  alive: Type.Boolean({ description: 'Its heartbeat was seen within three beats.' }),
  ready: Type.Union([Type.Boolean(), Type.Null()]),
  streams: Type.Union([Type.Integer(), Type.Null()]),
  framesOutPerSecond: Type.Union([Type.Number(), Type.Null()]),
  entriesPerSecond: Type.Union([Type.Number(), Type.Null()]),
  startedAt: Type.String({ format: 'date-time' }),
  uptimeSeconds: Type.Integer(),
  heartbeatAt: Type.String({ format: 'date-time' }),
});
export type NodeView = Static<typeof NodeView>;

export const ChannelView = Type.Object({
  channel: Type.String(),
  streams: Type.Integer({ description: 'Streams open on this channel across the mesh.' }),
  framesInPerSecond: Type.Number({ description: 'Payloads stored for this channel per second, over the last minute.' }),
  framesInLastMinute: Type.Integer(),
  lastActivity: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When its last payload was stored (since the admin service started).' }),
});
export type ChannelView = Static<typeof ChannelView>;

/** One point of the overview's charts, every few seconds. */
export const MeshSample = Type.Object({
  at: Type.Integer({ description: 'Epoch seconds.' }),
  streams: Type.Integer(),
  framesInPerSecond: Type.Number(),
  framesOutPerSecond: Type.Number(),
});
export type MeshSample = Static<typeof MeshSample>;

export const Overview = Type.Object({
  nodes: Type.Array(NodeView),
  streams: Type.Integer(),
  channels: Type.Integer(),
  keys: Type.Integer({ description: 'Keys neither revoked nor expired.' }),
  bans: Type.Integer({ description: 'Bans in force.' }),
  history: Type.Array(MeshSample, { description: 'The last minutes, oldest first.' }),
});
export type Overview = Static<typeof Overview>;

export const StreamView = Type.Composite([
  StreamClaim,
  Type.Object({ region: RegionOf("gateway that holds the stream (its claims bucket)"), keyLabel: Type.Union([Type.String(), Type.Null()]) }),
]);
export type StreamView = Static<typeof StreamView>;

export const KeyView = Type.Composite([
  Type.Omit(KeyRecord, ['secretSha256']),
  Type.Object({ status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]) }),
]);
export type KeyView = Static<typeof KeyView>;

export const KeyCreateBody = Type.Object(
  {
    scopes: Type.Array(Type.String(), { minItems: 1, maxItems: 32 }),
    label: Type.Optional(PlainText({ maxLength: 200 })),
    /** A duration from now (30d) or an ISO 8601 date or time. */
    expires: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type KeyCreateBody = Static<typeof KeyCreateBody>;

export const KeyCreated = Type.Object({
  clientId: Type.String(),
  clientSecret: Type.String({ description: 'Shown in this answer only; never stored.' }),
  scopes: Type.Array(Type.String()),
  label: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
});

export const ChannelParams = Type.Object({ channel: Type.String({ description: 'The channel (multiplayer server host), normalised as the relay does.' }) });
export type ChannelParams = Static<typeof ChannelParams>;
export const ClientIdParams = Type.Object({ clientId: Type.String() });
export type ClientIdParams = Static<typeof ClientIdParams>;
export const UuidParams = Type.Object({ uuid: Type.String() });
export type UuidParams = Static<typeof UuidParams>;

/** A query parameter as the parser gives it: once a string, repeated a list (refused as ambiguous). */
const QueryValue = Type.Union([Type.String(), Type.Array(Type.String())]);
const logFilters = {
  since: Type.Optional(QueryValue),
  fromSeq: Type.Optional(QueryValue),
  type: Type.Optional(QueryValue),
  sender: Type.Optional(QueryValue),
};
export const TailQuery = Type.Object(logFilters);
export type TailQuery = Static<typeof TailQuery>;
export const ReplayQuery = Type.Object({ ...logFilters, limit: Type.Optional(QueryValue) });
export type ReplayQuery = Static<typeof ReplayQuery>;
export const AuditQuery = Type.Object({ since: Type.Optional(QueryValue), limit: Type.Optional(QueryValue) });
export type AuditQuery = Static<typeof AuditQuery>;

export const BanAddBody = Type.Object(
  {
    uuid: Type.String({ maxLength: 64 }),
    reason: PlainText({ minLength: 1, maxLength: 500 }),
    expires: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type BanAddBody = Static<typeof BanAddBody>;

/** One stored payload as replay and tail show it (schemas/log-entry.ts, the one definition). */
export const LogEntryView = LogEntry;

export const Replay = Type.Object({
  entries: Type.Array(LogEntryView),
  /** More matched than `limit`; ask again with fromSeq = nextFrom. */
  more: Type.Boolean(),
  nextSeq: Type.Union([Type.Integer(), Type.Null()], { description: 'Without regions, where the next page starts (the same as nextFrom); null with regions, where one number cannot say it.' }),
  nextFrom: Type.Union([Type.String(), Type.Null()], {
    description: "Where the next page starts, to send as fromSeq: a sequence, or with regions one per region's log (`eu:1042.us:77`). Null when this page is the last.",
  }),
});

export { AuditRecord, BanRecord };
