// Composition of the admin service (`relay serve admin`): its own port, the console's files, and the
// admin API under /api, all from what the mesh writes to NATS. It never serves clients and never
// shares a port with the ingress or the gateway. Who may call what is request-guard.ts's, added
// before any route so it judges every one (default deny).

import type { AddressInfo } from 'node:net';
import helmet from '@fastify/helmet';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type RouteOptions } from 'fastify';
import type { AdminErrorBody } from '../../schemas/admin-api.js';
import { AuditLog } from '../core/audit.js';
import { BanStore } from '../core/bans.js';
import { loadConfig, type RelayConfig } from '../core/config.js';
import { KeyStore } from '../core/keys.js';
import { clientErrorHandler, unreadableKind, unreadableSentence } from '../core/client-error.js';
import { compileTrustedProxies } from '../core/client-address.js';
import { gateConnections, type ConnectionGate } from '../core/connection-gate.js';
import { createLogger, type Logger } from '../core/logger.js';
import { openNatsContext, type NatsContext } from '../core/nats.js';
import { operatorLogs } from '../core/operator-logs.js';
import { AdminError, asAdminError } from './admin-error.js';
import { AdminMetrics } from './admin-metrics.js';
import { AdminTokens } from './admin-tokens.js';
import { adminApi } from './api-routes.js';
import { registerConsole } from './console-assets.js';
import { MeshView } from './mesh-view.js';
import { guardRequests } from './request-guard.js';
import { TAIL_KEEPALIVE_MS, TailHub } from './tail-hub.js';

/** A route as registered, whoever registered it. */
export interface RegisteredRoute {
  method: string;
  url: string;
  /** What it declared (request-guard.ts); undefined: an admin token. */
  access: 'public' | 'probe' | undefined;
}

export interface AdminServer {
  config: RelayConfig;
  logger: Logger;
  nats: NatsContext;
  app: FastifyInstance;
  /** http://host:port of the console. */
  url: string;
  /** Every route of the admin API as METHOD /api/path/:param (HEAD aside), as the OpenAPI document lists them. */
  apiRoutes: string[];
  /** Every route the server registers, HEAD included: what the route-table test walks. */
  routes: RegisteredRoute[];
  port: number;
  /** The live tails open now (how many, for the operator's overview and the tests). */
  tails: Pick<TailHub, 'size'>;
  close(): Promise<void>;
}

export interface AdminOptions {
  env?: NodeJS.ProcessEnv;
  config?: RelayConfig;
  logger?: Logger;
  logDestination?: NodeJS.WritableStream;
  /** Adds routes beside the API before the server listens: the route-table test plants one. */
  extend?: (app: FastifyInstance) => void;
}

/** Time a client has for its headers, and for its whole request (a tail's answer is not bounded by it). */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * An idle connection between requests is closed after this. fastify's 72 s let one cheap request
 * hold a place for over a minute; the console asks every few seconds, and a browser reopens a
 * closed connection for nothing.
 */
const KEEP_ALIVE_TIMEOUT_MS = 5000;
/**
 * A connection on which nothing moves, either way, for this long is closed: a client that asks for
 * many answers and reads none held its place for ever, since no request deadline covers an answer.
 * A live tail sends a keepalive comment every TAIL_KEEPALIVE_MS, so a reading one never idles this long.
 */
const IDLE_TIMEOUT_MS = 2 * TAIL_KEEPALIVE_MS;

/** Bodies are a key's scopes or a ban's reason: small. */
const BODY_LIMIT = 64 * 1024;
/** A channel is a host name of up to 253 characters, with a port; some clients escape every dot. */
const MAX_PARAM_LENGTH = 1024;

export async function startAdminServer(options: AdminOptions = {}): Promise<AdminServer> {
  const config = options.config ?? loadConfig('admin', options.env);
  const logger =
    options.logger ??
    createLogger({
      level: config.logLevel,
      pretty: config.logPretty,
      nodeId: config.nodeId,
      service: 'admin',
      ...(options.logDestination !== undefined ? { destination: options.logDestination } : {}),
    });
  const tokens = new AdminTokens(config.admin.tokens);
  const metrics = new AdminMetrics(config.nodeId);
  const nats = await openNatsContext(config, 'relay-admin', logger);
  const keys = new KeyStore(nats.js, nats.buckets.keys, logger, nats.credentials.keys);
  const bans = new BanStore(nats.js, nats.buckets.bans, logger, null, nats.credentials);
  // With regions it reads and writes as the home region, wherever it runs (docs/REGIONS.md).
  const logs = operatorLogs(config.regions);
  const mesh = new MeshView({ nc: nats.nc, js: nats.js, regions: config.regions?.all ?? null, keys, bans, nodeTimeoutMs: config.gateway.nodeTimeoutMs, logger });
  const tails = new TailHub(nats.js, logs, logger);
  try {
    await Promise.all([keys.start(), bans.start(), mesh.start()]);
  } catch (e) {
    await nats.nc.close();
    throw e;
  }

  const loggerInstance: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance,
    bodyLimit: BODY_LIMIT,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // What Node's parser cannot read (a control character in a header): refused in our shape too.
    clientErrorHandler: clientErrorHandler((err) => {
      const kind = unreadableKind(err);
      const refusal = new AdminError(kind === 'timeout' ? 'request_timeout' : kind === 'headers_too_large' ? 'headers_too_large' : 'bad_request', unreadableSentence(kind, err));
      return { status: refusal.status, body: { error: refusal.code, message: refusal.message } };
    }),
    // A URL the router cannot read (a broken escape): refused in our shape, not the framework's.
    frameworkErrors: (error, _request, reply) => void refuse(reply, asAdminError(error)),
    logController: new LogController({ disableRequestLogging: true }),
    // A connection that never finishes its request is cut off, and there are only so many: half-sent
    // headers held by the thousand once took every file descriptor of the process. Node checks its
    // deadlines every connectionsCheckingInterval (30 s by default, far coarser than they are).
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: IDLE_TIMEOUT_MS,
    http: { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    // A member the schema does not name is refused, not silently dropped.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  });
  await app.register(helmet, {
    // The console is one origin's own files: no inline script or style, no framing, no referrer.
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    // Plain HTTP on 127.0.0.1 in development; a proxy in front adds HSTS where TLS ends.
    strictTransportSecurity: false,
  });
  // The options object each route is registered with; hooks of inner scopes may still mark it.
  const registered: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void registered.push(route));
  // The gate is set up once the routes are (below); a request reaches the guard only after that.
  let gate: ConnectionGate | null = null;
  guardRequests(app, { tokens, allowedHosts: config.admin.allowedHosts, vouch: (socket) => gate?.vouch(socket) });

  app.setErrorHandler((error, request, reply) => {
    const e = asAdminError(error);
    if (e.code === 'internal_error') request.log.error({ err: error, method: request.method, url: request.url }, 'admin request failed');
    else if (e.status >= 500) request.log.warn({ err: error, method: request.method, url: request.url, code: e.code }, 'admin request refused');
    return refuse(reply, e);
  });
  app.setNotFoundHandler((request, reply) => refuse(reply, new AdminError('not_found', `Nothing is served at ${request.method} ${request.url.split('?')[0]}.`)));

  app.get('/healthz', { config: { access: 'probe' } }, async () => ({ status: 'ok' }));
  // Counts and the process's own figures, nothing about keys, bans or players: a scraper needs no token.
  app.get('/metrics', { config: { access: 'probe' } }, async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
  // Ready while NATS answers: everything the console shows comes from it.
  app.get('/readyz', { config: { access: 'probe' } }, async (_request, reply) => {
    const ok = await Promise.race([
      nats.jsm.getAccountInfo().then(() => true, () => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref()),
    ]);
    return ok ? { status: 'ready' } : reply.code(503).send({ status: 'not_ready', failing: ['nats'] });
  });
  await app.register(adminApi, { prefix: '/api', js: nats.js, keys, bans, audit: new AuditLog(nats.js), mesh, tails, logs, logger });
  await registerConsole(app);
  options.extend?.(app);

  // Before any byte is parsed: each address's share, then every address's together.
  app.server.maxConnections = config.admin.maxConnections;
  gate = gateConnections(app.server, {
    perAddress: config.admin.maxConnectionsPerAddress,
    // Operators share their address with every local user (ADMIN_HOST=127.0.0.1, ssh tunnels):
    // at the cap, a stranger's connection goes, never one that carried a token.
    evictUnvouched: true,
    ipv6Prefix: config.profile.ipv6Prefix,
    exempt: compileTrustedProxies(config.trustedProxies),
    setting: 'ADMIN_MAX_CONNECTIONS_PER_ADDRESS',
    logger,
    refused: (reason) => metrics.connectionsRefused.inc({ reason }),
  });
  await app.listen({ host: config.admin.host, port: config.admin.port });
  const address = app.server.address() as AddressInfo;
  const host = config.admin.host === '0.0.0.0' || config.admin.host === '::' ? '127.0.0.1' : config.admin.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  logger.info({ url, node: config.nodeId, tokens: config.admin.tokens.map((t) => t.name) }, 'admin service listening');

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await tails.closeAll();
      await app.close();
      await mesh.stop();
      await Promise.all([keys.stop(), bans.stop()]);
      await nats.nc.drain().catch(() => undefined);
    })();
    return closing;
  };
  const routes = registered.flatMap((r) => [r.method].flat().map((method): RegisteredRoute => ({ method, url: r.url, access: r.config?.access })));
  const apiRoutes = routes.filter((r) => r.url.startsWith('/api/') && r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`);
  return { config, logger, nats, app, url, port: address.port, tails, apiRoutes, routes, close };
}

function refuse(reply: FastifyReply, e: AdminError): FastifyReply {
  if (e.retryAfter !== undefined) void reply.header('retry-after', String(e.retryAfter));
  const body: AdminErrorBody = { error: e.code, message: e.message };
  return reply.code(e.status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(body);
}
