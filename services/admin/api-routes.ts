// The admin API under /api: what the console shows and does. Every route needs a bearer admin token
// (the hook in admin-server.ts names the operator first); every change is written to the audit
// trail as `admin-api:<token name>`.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditRecord } from '../../schemas/records.js';
import { BanAddBody, KeyCreateBody, type Session } from '../../schemas/admin-api.js';
import { normaliseUuid } from '../../schemas/uuid.js';
import type { AuditLog } from '../core/audit.js';
import type { BanStore } from '../core/bans.js';
import { normaliseChannel } from '../core/channel.js';
import { keyView } from '../core/key-view.js';
import type { KeyStore } from '../core/keys.js';
import { LogQueryError, parseLogQuery, type LogQuery } from '../core/log-query.js';
import type { Logger } from '../core/logger.js';
import { ALL_SCOPES } from '../core/scopes.js';
import { parseExpiry, parseSince, parseWholeNumber } from '../core/units.js';
import { RELAY_VERSION } from '../core/version.js';
import type { JetStreamClient } from '@nats-io/jetstream';
import { AdminError } from './admin-error.js';
import { replayChannel } from './log-reader.js';
import type { MeshView } from './mesh-view.js';
import type { TailHub } from './tail-hub.js';

export interface ApiDeps {
  js: JetStreamClient;
  keys: KeyStore;
  bans: BanStore;
  audit: AuditLog;
  mesh: MeshView;
  tails: TailHub;
  logger: Logger;
}

type Query = Record<string, string | string[] | undefined>;

const REPLAY_LIMIT = { default: 100, max: 1000 };
const AUDIT_LIMIT = { default: 200, max: 1000 };

export function registerApiRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { keys, bans, audit, mesh } = deps;

  /** Records an action after it took effect; a failure to record is said, never swallowed. */
  const audited = async (request: FastifyRequest, entry: Omit<AuditRecord, 'at' | 'actor'>): Promise<void> => {
    try {
      await audit.record({ actor: `admin-api:${request.operator}`, ...entry });
    } catch (e) {
      deps.logger.error({ err: e, action: entry.action, target: entry.target }, 'audit record not written');
      throw new AdminError('audit_not_recorded', `${entry.action} ${entry.target} took effect, but its audit record could not be written; do not repeat it.`);
    }
  };

  app.get('/api/session', async (request): Promise<Session> => ({ name: request.operator, version: RELAY_VERSION, scopes: [...ALL_SCOPES] }));
  app.get('/api/overview', async () => mesh.overview());
  app.get('/api/nodes', async () => mesh.nodes());
  app.get('/api/channels', async () => mesh.channels());
  app.get('/api/channels/:channel/streams', async (request) => mesh.streams(channelParam(request)));

  app.get('/api/channels/:channel/replay', async (request) => {
    const channel = channelParam(request);
    const q = request.query as Query;
    const limit = wholeNumber(q, 'limit', REPLAY_LIMIT.default, REPLAY_LIMIT.max);
    return replayChannel(deps.js, channel, logQuery(q, false), limit);
  });

  app.get('/api/channels/:channel/tail', async (request, reply) => {
    const channel = channelParam(request);
    await deps.tails.open(channel, logQuery(request.query as Query, true), request, reply);
  });

  app.get('/api/keys', async () => [...keys.mirror.values()].map((k) => keyView(k)).sort((a, b) => b.createdAt.localeCompare(a.createdAt)));

  app.post('/api/keys', { schema: { body: KeyCreateBody } }, async (request, reply) => {
    const body = request.body as KeyCreateBody;
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

  app.post('/api/keys/:clientId/revoke', async (request) => {
    const { clientId } = request.params as { clientId: string };
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(clientId)) throw new AdminError('not_found', `No key with client id ${JSON.stringify(clientId.slice(0, 64))}.`);
    const revoked = await keys.revoke(clientId);
    await audited(request, { action: 'key.revoke', target: clientId, ...(revoked.label !== undefined ? { label: revoked.label } : {}) });
    return keyView(revoked);
  });

  app.get('/api/bans', async () => bans.list());

  app.post('/api/bans', { schema: { body: BanAddBody } }, async (request, reply) => {
    const body = request.body as BanAddBody;
    const uuid = uuidOf(body.uuid);
    const reason = body.reason.trim();
    if (reason === '') throw new AdminError('bad_request', 'reason must say why the account is banned.');
    const expiresAt = body.expires === undefined || body.expires.trim() === '' ? undefined : expiry(body.expires);
    const ban = await bans.ban(uuid, { reason, by: `admin-api:${request.operator}`, ...(expiresAt !== undefined ? { expiresAt } : {}) });
    await audited(request, { action: 'ban.add', target: uuid, reason, ...(expiresAt !== undefined ? { expiresAt } : {}) });
    return reply.code(201).send(ban);
  });

  app.delete('/api/bans/:uuid', async (request, reply) => {
    const uuid = uuidOf((request.params as { uuid: string }).uuid);
    if (!(await bans.unban(uuid))) throw new AdminError('not_found', `${uuid} is not banned.`);
    await audited(request, { action: 'ban.remove', target: uuid });
    return reply.code(204).send();
  });

  app.get('/api/audit', async (request) => {
    const q = request.query as Query;
    const limit = wholeNumber(q, 'limit', AUDIT_LIMIT.default, AUDIT_LIMIT.max);
    const since = single(q, 'since');
    if (since === undefined) return audit.latest(limit);
    const parsed = parseSince(since);
    if (!parsed.ok) throw new AdminError('bad_request', `since ${parsed.problem} (got "${since}").`);
    return audit.list(parsed.iso, limit);
  });

  app.all('/api/*', async (request: FastifyRequest, _reply: FastifyReply) => {
    throw new AdminError('not_found', `The admin API has no ${request.method} ${request.url.split('?')[0]}.`);
  });
}

/** A query parameter given once; given twice it is ambiguous, never "the first one". */
function single(q: Query, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) throw new AdminError('bad_request', `${name} is given more than once.`);
  return v;
}

function wholeNumber(q: Query, name: string, fallback: number, max: number): number {
  const text = single(q, name);
  if (text === undefined) return fallback;
  const n = parseWholeNumber(text);
  if (n === null || n < 1 || n > max) throw new AdminError('bad_request', `${name} must be a whole number from 1 to ${max} (got "${text.slice(0, 32)}").`);
  return n;
}

function logQuery(q: Query, fromNow: boolean): LogQuery {
  try {
    return parseLogQuery({ since: single(q, 'since'), fromSeq: single(q, 'fromSeq'), type: single(q, 'type'), sender: single(q, 'sender') }, fromNow, (f) => f);
  } catch (e) {
    if (e instanceof LogQueryError) throw new AdminError('bad_request', e.message);
    throw e;
  }
}

function channelParam(request: FastifyRequest): string {
  const { channel } = request.params as { channel: string };
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
