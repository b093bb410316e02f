// The admin API under /api: what the console shows and does, as one encapsulated plugin. Every route
// needs a bearer admin token: request-guard.ts decides it on the matched route before any handler
// here runs (none of these routes declares itself public). Bodies are JSON only, params, query
// strings and bodies are typed from schemas/admin-api.ts, and every change is written to the audit
// trail naming the operator's token (`admin-api:<token name>`).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AuditRecord } from '../../schemas/records.js';
import { AuditQuery, BanAddBody, ChannelParams, ClientIdParams, KeyCreateBody, ReplayQuery, TailQuery, UuidParams, type Session } from '../../schemas/admin-api.js';
import { normaliseUuid } from '../../schemas/uuid.js';
import type { AuditLog } from '../core/audit.js';
import type { BanStore } from '../core/bans.js';
import { normaliseChannel } from '../core/channel.js';
import { keyView } from '../core/key-view.js';
import type { KeyStore } from '../core/keys.js';
import { LogQueryError, parseLogQuery, type LogQuery } from '../core/log-query.js';
import type { Logger } from '../core/logger.js';
import { regionOrder, type OperatorLog } from '../core/operator-logs.js';
import { ALL_SCOPES } from '../core/scopes.js';
import { parseExpiry, parseSince, parseWholeNumber } from '../core/units.js';
import { RELAY_VERSION } from '../core/version.js';
import type { JetStreamClient } from '@nats-io/jetstream';
import { AdminError } from './admin-error.js';
import { replayChannel } from './replay-page.js';
import type { MeshView } from './mesh-view.js';
import { operatorOf } from './request-guard.js';
import type { TailHub } from './tail-hub.js';

export interface ApiDeps {
  js: JetStreamClient;
  keys: KeyStore;
  bans: BanStore;
  audit: AuditLog;
  mesh: MeshView;
  tails: TailHub;
  /** The logs the replay reads (with regions, every region's as the home region holds it). */
  logs: readonly OperatorLog[];
  logger: Logger;
}

/** A query parameter as parsed: once a string, repeated a list. */
type QueryValue = string | string[] | undefined;
type LogFilters = TailQuery;

const REPLAY_LIMIT = { default: 100, max: 1000 };
const AUDIT_LIMIT = { default: 200, max: 1000 };

export const adminApi: FastifyPluginAsyncTypebox<ApiDeps> = async (api, deps) => {
  const { keys, bans, audit, mesh } = deps;
  const order = regionOrder(deps.logs);
  const regions = order.length === 0 ? null : order;
  const logQuery = (q: LogFilters, fromNow: boolean): LogQuery => {
    try {
      return parseLogQuery({ since: single(q.since, 'since'), fromSeq: single(q.fromSeq, 'fromSeq'), type: single(q.type, 'type'), sender: single(q.sender, 'sender') }, fromNow, (f) => f, regions);
    } catch (e) {
      if (e instanceof LogQueryError) throw new AdminError('bad_request', e.message);
      throw e;
    }
  };
  // JSON bodies only. text/plain (and forms) are what a page of another site may send without
  // asking the browser first; without a parser for them such a body is 415 before any handler.
  api.removeContentTypeParser('text/plain');

  /** Records an action after it took effect; a failure to record is said, never swallowed. */
  const audited = async (request: FastifyRequest, entry: Omit<AuditRecord, 'at' | 'actor'>): Promise<void> => {
    try {
      await audit.record({ actor: operatorOf(request).actor, ...entry });
    } catch (e) {
      deps.logger.error({ err: e, action: entry.action, target: entry.target }, 'audit record not written');
      throw new AdminError('audit_not_recorded', `${entry.action} ${entry.target} took effect, but its audit record could not be written; do not repeat it.`);
    }
  };

  api.get('/session', async (request): Promise<Session> => ({ name: operatorOf(request).name, version: RELAY_VERSION, scopes: [...ALL_SCOPES] }));
  api.get('/overview', async () => mesh.overview());
  api.get('/nodes', async () => mesh.nodes());
  api.get('/channels', async () => mesh.channels());
  api.get('/channels/:channel/streams', { schema: { params: ChannelParams } }, async (request) => mesh.streams(channelOf(request.params.channel)));

  api.get('/channels/:channel/replay', { schema: { params: ChannelParams, querystring: ReplayQuery } }, async (request) => {
    const channel = channelOf(request.params.channel);
    const limit = wholeNumber(request.query.limit, 'limit', REPLAY_LIMIT.default, REPLAY_LIMIT.max);
    return replayChannel(deps.js, deps.logs, channel, logQuery(request.query, false), limit);
  });

  api.get('/channels/:channel/tail', { schema: { params: ChannelParams, querystring: TailQuery } }, async (request, reply) => {
    const channel = channelOf(request.params.channel);
    await deps.tails.open(channel, logQuery(request.query, true), operatorOf(request), reply);
  });

  api.get('/keys', async () => [...keys.mirror.values()].map((k) => keyView(k)).sort((a, b) => b.createdAt.localeCompare(a.createdAt)));

  api.post('/keys', { schema: { body: KeyCreateBody } }, async (request, reply) => {
    const body = request.body;
    const label = body.label?.trim();
    const expiresAt = body.expires === undefined ? undefined : expiry(body.expires);
    const created = await keys.create({ scopes: body.scopes, ...(label ? { label } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}) });
    await audited(request, {
      action: 'key.create',
      target: created.clientId,
      scopes: created.scopes,
      ...(created.label !== undefined ? { label: created.label } : {}),
      ...(created.expiresAt !== undefined ? { expiresAt: created.expiresAt } : {}),
    });
    return reply.code(201).send(created);
  });

  api.post('/keys/:clientId/revoke', { schema: { params: ClientIdParams } }, async (request) => {
    const { clientId } = request.params;
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(clientId)) throw new AdminError('not_found', `No key with client id ${JSON.stringify(clientId.slice(0, 64))}.`);
    const { key: revoked, changed } = await keys.revoke(clientId);
    // Revoking twice changes nothing, so the trail says it once.
    if (changed) await audited(request, { action: 'key.revoke', target: clientId, ...(revoked.label !== undefined ? { label: revoked.label } : {}) });
    return keyView(revoked);
  });

  api.get('/bans', async () => bans.list());

  api.post('/bans', { schema: { body: BanAddBody } }, async (request, reply) => {
    const body = request.body;
    const uuid = uuidOf(body.uuid);
    const reason = body.reason.trim();
    if (reason === '') throw new AdminError('bad_request', 'reason must say why the account is banned.');
    const expiresAt = body.expires === undefined || body.expires.trim() === '' ? undefined : expiry(body.expires);
    const ban = await bans.ban(uuid, { reason, by: operatorOf(request).actor, ...(expiresAt !== undefined ? { expiresAt } : {}) });
    await audited(request, { action: 'ban.add', target: uuid, reason, ...(expiresAt !== undefined ? { expiresAt } : {}) });
    return reply.code(201).send(ban);
  });

  api.delete('/bans/:uuid', { schema: { params: UuidParams } }, async (request, reply) => {
    const uuid = uuidOf(request.params.uuid);
    // With regions each region's bans bucket is read from its leader; one out of reach keeps its bans.
    const lift = await bans.unban(uuid);
    if (lift.lifted) await audited(request, { action: 'ban.remove', target: uuid });
    if (lift.unreached.length > 0) {
      const done = lift.lifted ? 'Its bans were lifted where they could be read, but' : 'No ban of it could be lifted:';
      throw new AdminError('unavailable', `${done} the bans of ${lift.unreached.join('; ')} could not be read, and any ban there stands; lift again once it can be reached.`);
    }
    if (!lift.lifted) throw new AdminError('not_found', `${uuid} is not banned.`);
    return reply.code(204).send();
  });

  api.get('/audit', { schema: { querystring: AuditQuery } }, async (request) => {
    const limit = wholeNumber(request.query.limit, 'limit', AUDIT_LIMIT.default, AUDIT_LIMIT.max);
    const since = single(request.query.since, 'since');
    if (since === undefined) return audit.latest(limit);
    const parsed = parseSince(since);
    if (!parsed.ok) throw new AdminError('bad_request', `since ${parsed.problem} (got "${since}").`);
    return audit.list(parsed.iso, limit);
  });
};

/** A query parameter given once; given twice it is ambiguous, never "the first one". */
function single(v: QueryValue, name: string): string | undefined {
  if (Array.isArray(v)) throw new AdminError('bad_request', `${name} is given more than once.`);
  return v;
}

function wholeNumber(value: QueryValue, name: string, fallback: number, max: number): number {
  const text = single(value, name);
  if (text === undefined) return fallback;
  const n = parseWholeNumber(text);
  if (n === null || n < 1 || n > max) throw new AdminError('bad_request', `${name} must be a whole number from 1 to ${max} (got "${text.slice(0, 32)}").`);
  return n;
}

function channelOf(channel: string): string {
  try {
    return normaliseChannel(channel);
  } catch (e) {
    throw new AdminError('bad_request', e instanceof Error ? e.message : 'Invalid channel.');
  }
}

function uuidOf(value: string): string {
  const uuid = normaliseUuid(value.trim());
  if (uuid === null) throw new AdminError('bad_request', `"${value.slice(0, 64)}" is not a UUID (dashed or undashed).`);
  return uuid;
}

function expiry(text: string): string {
  const parsed = parseExpiry(text.trim());
  if (!parsed.ok) throw new AdminError('bad_request', `expires ${parsed.problem} (got "${text}").`);
  return parsed.iso;
}
