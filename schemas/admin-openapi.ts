// The admin API's part of the OpenAPI document: its routes (on the admin service's own port, under
// /api), built from the TypeBox shapes of admin-api.ts and its error catalogue. A test checks this
// table against the routes the admin service really registers.

import type { TSchema } from '@sinclair/typebox';
import { ADMIN_ERRORS, AdminErrorBody, AuditRecord, BanAddBody, BanRecord, ChannelView, KeyCreateBody, KeyCreated, KeyView, NodeView, Overview, Replay, Session, StreamView, type AdminErrorCode } from './admin-api.js';
import { plain, type JsonObject } from './api-components.js';

const SCHEMA = '#/components/schemas/';
const ref = (name: string): JsonObject => ({ $ref: `${SCHEMA}${name}` });

/** Component name → schema; prefixed so they never collide with the client API's. */
const COMPONENTS: Record<string, TSchema> = {
  AdminError: AdminErrorBody,
  AdminSession: Session,
  AdminNode: NodeView,
  AdminChannel: ChannelView,
  AdminOverview: Overview,
  AdminStream: StreamView,
  AdminKey: KeyView,
  AdminKeyCreate: KeyCreateBody,
  AdminKeyCreated: KeyCreated,
  AdminBan: BanRecord,
  AdminBanAdd: BanAddBody,
  AdminAuditRecord: AuditRecord,
  AdminReplay: Replay,
};

interface Param {
  name: string;
  in: 'path' | 'query';
  description: string;
}

interface AdminRoute {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI form: /api/channels/{channel}/streams. */
  path: string;
  summary: string;
  params?: Param[];
  body?: string;
  /** Status and the component it answers with (null: no body; 'sse': an event stream). */
  ok: { status: number; schema: JsonObject | null | 'sse' };
  errors: AdminErrorCode[];
}

const channel: Param = { name: 'channel', in: 'path', description: 'The channel (multiplayer server host), URL-encoded; normalised as the relay does.' };
const logFilters: Param[] = [
  { name: 'since', in: 'query', description: 'Start this long ago (10m, 2h, 7d) or at an ISO 8601 date or time.' },
  { name: 'fromSeq', in: 'query', description: 'Start at this stream sequence (not with since).' },
  { name: 'type', in: 'query', description: 'Only these payload types, comma-separated.' },
  { name: 'sender', in: 'query', description: 'Only payloads sent by (or re-attributed to) this account UUID.' },
];
const array = (name: string): JsonObject => ({ type: 'array', items: ref(name) });

export const ADMIN_ROUTES: AdminRoute[] = [
  { method: 'get', path: '/api/session', summary: 'Who is signed in (the token name the audit records), the version, every key scope.', ok: { status: 200, schema: ref('AdminSession') }, errors: [] },
  { method: 'get', path: '/api/overview', summary: 'Nodes, totals and the last ten minutes sampled every 5 s.', ok: { status: 200, schema: ref('AdminOverview') }, errors: [] },
  { method: 'get', path: '/api/nodes', summary: 'Every ingress and gateway that announced itself: alive, ready, version, streams, rates, uptime.', ok: { status: 200, schema: array('AdminNode') }, errors: [] },
  { method: 'get', path: '/api/channels', summary: 'Channels with streams or payloads in the last hour: streams open, payloads per second, last activity.', ok: { status: 200, schema: array('AdminChannel') }, errors: [] },
  { method: 'get', path: '/api/channels/{channel}/streams', summary: "A channel's streams (and bridge streams hearing every channel): account, agent, key label, node, since.", params: [channel], ok: { status: 200, schema: array('AdminStream') }, errors: ['bad_request'] },
  {
    method: 'get',
    path: '/api/channels/{channel}/replay',
    summary: "Stored payloads of a channel from a time or sequence (default: the oldest kept), with relay replay's filters.",
    params: [channel, ...logFilters, { name: 'limit', in: 'query', description: 'At most this many entries (1-1000, default 100); `more` and `nextSeq` page on.' }],
    ok: { status: 200, schema: ref('AdminReplay') },
    errors: ['bad_request'],
  },
  {
    method: 'get',
    path: '/api/channels/{channel}/tail',
    summary: 'A live tail as Server-Sent Events: `event: entry` with a replay entry as data, `id:` its sequence; from now unless since or fromSeq.',
    params: [channel, ...logFilters],
    ok: { status: 200, schema: 'sse' },
    errors: ['bad_request', 'too_many_tails', 'tails_busy'],
  },
  { method: 'get', path: '/api/keys', summary: 'Every key, newest first, without its secret or hash.', ok: { status: 200, schema: array('AdminKey') }, errors: [] },
  { method: 'post', path: '/api/keys', summary: 'Creates a key; its secret is in this answer only. Audited as key.create.', body: 'AdminKeyCreate', ok: { status: 201, schema: ref('AdminKeyCreated') }, errors: ['bad_request', 'audit_not_recorded'] },
  {
    method: 'post',
    path: '/api/keys/{clientId}/revoke',
    summary: 'Revokes a key: every stream opened with it closes. Audited as key.revoke.',
    params: [{ name: 'clientId', in: 'path', description: 'The key to revoke.' }],
    ok: { status: 200, schema: ref('AdminKey') },
    errors: ['not_found', 'audit_not_recorded'],
  },
  { method: 'get', path: '/api/bans', summary: 'Every ban, oldest first.', ok: { status: 200, schema: array('AdminBan') }, errors: [] },
  { method: 'post', path: '/api/bans', summary: "Bans an account with a reason (and an expiry); its streams close on every node. Audited as ban.add.", body: 'AdminBanAdd', ok: { status: 201, schema: ref('AdminBan') }, errors: ['bad_request', 'audit_not_recorded'] },
  {
    method: 'delete',
    path: '/api/bans/{uuid}',
    summary: 'Lifts a ban. Audited as ban.remove.',
    params: [{ name: 'uuid', in: 'path', description: 'The banned account.' }],
    ok: { status: 204, schema: null },
    errors: ['bad_request', 'not_found', 'audit_not_recorded'],
  },
  {
    method: 'get',
    path: '/api/audit',
    summary: "Operators' actions (console and CLI), oldest first: the newest `limit`, or from `since`.",
    params: [
      { name: 'since', in: 'query', description: 'From this long ago or this ISO 8601 time.' },
      { name: 'limit', in: 'query', description: 'At most this many records (1-1000, default 200).' },
    ],
    ok: { status: 200, schema: array('AdminAuditRecord') },
    errors: ['bad_request'],
  },
];

function refusal(codes: AdminErrorCode[]): JsonObject {
  const waits = codes.some((c) => 'retryAfter' in ADMIN_ERRORS[c]);
  return {
    description: codes.map((c) => `\`${c}\`: ${ADMIN_ERRORS[c].when}`).join(' '),
    'x-error-codes': codes,
    ...(waits ? { headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } } : {}),
    content: { 'application/json': { schema: ref('AdminError') } },
  };
}

function operation(r: AdminRoute): JsonObject {
  const responses: JsonObject = {};
  const ok = r.ok.schema;
  responses[String(r.ok.status)] =
    ok === null
      ? { description: 'Done.' }
      : ok === 'sse'
        ? { description: 'A Server-Sent Events stream until the client leaves.', content: { 'text/event-stream': { schema: { type: 'string' } } } }
        : { description: 'OK.', content: { 'application/json': { schema: ok } } };
  // Every route: the token and the Host; every change also: its Origin and a JSON body.
  const changes: AdminErrorCode[] = r.method === 'get' ? [] : ['origin_not_allowed', 'payload_too_large', 'unsupported_media_type'];
  const codes: AdminErrorCode[] = [...r.errors, 'admin_token_required', 'admin_token_invalid', 'host_not_allowed', ...changes, 'unavailable', 'internal_error'];
  const byStatus = new Map<number, AdminErrorCode[]>();
  for (const c of codes) byStatus.set(ADMIN_ERRORS[c].status, [...(byStatus.get(ADMIN_ERRORS[c].status) ?? []), c]);
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) responses[String(status)] = refusal(list);
  return {
    tags: ['admin'],
    summary: r.summary,
    description: `${r.summary} ${r.method === 'get' ? ADMIN_READ : ADMIN_CHANGE}`,
    operationId: `admin_${r.method}_${r.path.replace(/^\/api\//, '').replace(/[{}]/g, '').replace(/\//g, '_')}`,
    security: [{ adminToken: [] }],
    ...(r.params !== undefined
      ? { parameters: r.params.map((p) => ({ name: p.name, in: p.in, required: p.in === 'path', description: p.description, schema: { type: 'string' } })) }
      : {}),
    ...(r.body !== undefined ? { requestBody: { required: true, content: { 'application/json': { schema: ref(r.body) } } } } : {}),
    responses,
  };
}

/** What every admin operation requires, said in each operation's description. */
const ADMIN_READ = 'On the admin service only (never the client address), with an admin token as Bearer and a Host of ADMIN_ALLOWED_HOSTS.';
const ADMIN_CHANGE = `${ADMIN_READ} A change is also checked for its Origin, takes a JSON body, and is recorded in the audit.`;

const ADMIN_SERVERS = [{ url: 'http://127.0.0.1:8090', description: 'The admin service (ADMIN_HOST:ADMIN_PORT), never the client address.' }];

/** The admin paths, each with the admin service as its server. */
export function adminPaths(): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const r of ADMIN_ROUTES) paths[r.path] = { servers: ADMIN_SERVERS, ...(paths[r.path] ?? {}), [r.method]: operation(r) };
  return paths;
}

export function adminComponents(): Record<string, JsonObject> {
  return Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, plain(schema)]));
}

export const ADMIN_SECURITY_SCHEME: JsonObject = {
  type: 'http',
  scheme: 'bearer',
  description: 'An admin token (ADMIN_TOKEN or one of ADMIN_TOKENS) of the admin service. Never a cookie.',
};
