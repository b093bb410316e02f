// The HTTP shell both services share: fastify with our logger, JSON error bodies for every refusal
// (fastify's own included), and the operational endpoints /healthz, /readyz and /metrics.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { TrustProxy } from './client-address.js';
import { gateConnections } from './connection-gate.js';
import { clientErrorAnswer, clientErrorHandler } from './client-error.js';
import { isRelayError, RelayError, type ErrorBody } from './errors.js';
import type { Logger } from './logger.js';
import type { RelayMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';

/** How long a refused request's answer may take to leave before its connection is cut. */
const CLOSE_GRACE_MS = 1000;

export interface HttpOptions {
  logger: Logger;
  metrics: RelayMetrics;
  bodyLimit: number;
  /** Time a client has for its headers, and then for its body (408 request_timeout beyond). */
  bodyTimeoutMs: number;
  readiness: Readiness;
  /**
   * Handles GET / and /irc before fastify sees them: SSE streams live for hours, and fastify's
   * per-request objects (request, reply, child logger, hooks) would live as long for nothing.
   */
  streamHandler?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Filled with every route fastify registers (the route-table test walks them all). */
  routes?: ClientRoute[];
  /** Before a byte is read: each address's share of the port (connection-gate.ts). */
  connections: { perAddress: number; ipv6Prefix: number; exempt: TrustProxy };
}

/** A route the client port answers: method and path as registered. */
export interface ClientRoute {
  method: string;
  url: string;
}

/** The paths the specification names for GET (streams) and POST (payloads); a query may follow. */
export const CLIENT_PATHS = ['/', '/irc'] as const;

const STREAM_PATH = /^\/(irc)?(\?|$)/;

/**
 * Whether a raw request target is one of CLIENT_PATHS exactly, with or without a query. The router
 * decodes percent-escapes (`/%69rc` is routed to /irc), where GET streams match the raw target: both
 * verbs answer only the spellings the specification names.
 */
export function isClientPath(target: string | undefined): boolean {
  return STREAM_PATH.test(target ?? '');
}

export function createHttpApp(options: HttpOptions): FastifyInstance {
  const loggerInstance: FastifyBaseLogger = options.logger;
  const streams = options.streamHandler;
  const app = Fastify({
    loggerInstance,
    serverFactory: (handler) => {
      const server = createServer(
        {
          // Node's own request timeout answers a bare 408 and would also apply to nothing useful
          // here: bodies get their own deadline below, and streams have no body.
          requestTimeout: 0,
          headersTimeout: options.bodyTimeoutMs,
          // How often Node checks the headers deadline (default 30 s, far coarser than the deadline).
          connectionsCheckingInterval: Math.min(1000, options.bodyTimeoutMs),
          keepAliveTimeout: 65_000,
        },
        (req, res) => {
          if (streams !== undefined && req.method === 'GET' && STREAM_PATH.test(req.url ?? '')) return streams(req, res);
          bodyDeadline(req, res, options.bodyTimeoutMs, () => options.metrics.refusals.inc({ code: 'request_timeout' }));
          handler(req, res);
        },
      );
      gateConnections(server, {
        ...options.connections,
        setting: 'MAX_CONNECTIONS_PER_ADDRESS',
        logger: options.logger,
        refused: (reason) => options.metrics.connectionsRefused.inc({ reason }),
      });
      return server;
    },
    bodyLimit: options.bodyLimit,
    // Per-request lines would drown the log at relay rates; refusals and failures are logged instead.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    // While closing, requests still reach the services, which answer 503 draining with Retry-After
    // (fastify's own 503 carries neither a code of ours nor a Retry-After).
    return503OnClosing: false,
    // What Node's parser refuses is answered in our shape too (a control character in a header).
    clientErrorHandler: clientErrorHandler((err) => {
      const refusal = clientErrorAnswer(err);
      options.metrics.refusals.inc({ code: refusal.code });
      return { status: refusal.status, body: refusal.toBody() };
    }),
    // A target the router cannot read (a broken escape, `/%zz`) never reaches the error handler:
    // fastify answered it in its own shape ({"error":"Bad Request","code":"FST_ERR_BAD_URL",...}),
    // quoting the target, where every other refusal is {"error": <code>, "message"}.
    frameworkErrors: (error, _request, reply) => {
      options.metrics.refusals.inc({ code: 'bad_request' });
      void sendError(reply, new RelayError('bad_request', `The request target cannot be read (${error.code}): a percent escape may be broken; use / or /irc.`));
    },
  });
  app.removeContentTypeParser('text/plain');
  const routes = options.routes;
  if (routes !== undefined) app.addHook('onRoute', (r) => void [r.method].flat().forEach((method) => routes.push({ method, url: r.url })));

  app.setErrorHandler((error: FastifyError | RelayError, request, reply) => {
    const relayError = isRelayError(error) ? error : fromFastifyError(error);
    options.metrics.refusals.inc({ code: relayError.code });
    if (relayError.status >= 500 && relayError.code === 'internal_error') {
      request.log.error({ err: error, method: request.method, url: request.url, headers: request.headers }, 'request failed');
    } else {
      // Why a client was refused, with what it sent (secret headers are redacted by the logger).
      request.log.debug({ method: request.method, url: request.url, status: relayError.status, code: relayError.code, headers: request.headers }, 'refused');
    }
    void sendError(reply, relayError);
  });

  app.setNotFoundHandler((request, reply) => {
    void sendError(reply, new RelayError('not_found', `Nothing is served at ${request.method} ${request.url.split('?')[0]}; use / or /irc.`));
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const failing = await options.readiness.evaluate();
    if (failing.length > 0) {
      return reply.code(503).send({ status: 'not_ready', failing });
    }
    return { status: 'ready' };
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.registry.metrics();
    return reply.type(options.metrics.registry.contentType).send(text);
  });
  return app;
}

export function sendError(reply: FastifyReply, error: RelayError): FastifyReply {
  if (error.retryAfter !== undefined) void reply.header('retry-after', String(error.retryAfter));
  const body: ErrorBody = error.toBody();
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

/** A refusal written without fastify (the stream path). */
export function writeError(res: ServerResponse, error: RelayError): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(error.toBody());
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  res.writeHead(error.status, headers).end(body);
}

/**
 * A body still arriving at the deadline is answered 408 request_timeout and its connection closed:
 * a client that never finishes its body must not hold a connection (and a file descriptor) for ever.
 */
function bodyDeadline(req: IncomingMessage, res: ServerResponse, ms: number, onTimeout: () => void): void {
  if (req.complete) return;
  const timer = setTimeout(() => {
    if (req.complete || res.headersSent) return;
    res.shouldKeepAlive = false;
    onTimeout();
    // Stop reading: the rest of the body must never reach the handler after "nothing was published".
    req.pause();
    writeError(res, new RelayError('request_timeout', `The request body did not arrive within ${ms} ms; nothing was published.`));
    const socket = req.socket;
    res.once('finish', () => socket.destroy());
    // A client that does not read its answer either is cut off all the same.
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  }, ms);
  timer.unref();
  const clear = (): void => clearTimeout(timer);
  req.once('end', clear);
  res.once('close', clear);
}

function fromFastifyError(error: FastifyError): RelayError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RelayError('payload_too_large', 'The request body is larger than this relay accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new RelayError('unsupported_media_type', 'POST bodies must be JSON: send Content-Type: application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new RelayError('invalid_json', 'The request body is empty; send a payload or an array of payloads.');
    default:
      break;
  }
  if (error.statusCode === 400 || error instanceof SyntaxError) {
    return new RelayError('invalid_json', `The request body is not valid JSON: ${error.message}`);
  }
  // Any other request fastify could not read is the client's fault: one code, one status (400).
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new RelayError('bad_request', error.message);
  }
  return new RelayError('internal_error', 'The relay failed to handle this request.', { cause: error });
}

