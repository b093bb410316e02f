// pino, with every place a secret could sit redacted. Tokens and client secrets never reach a log
// line: headers are redacted by their shape wherever they are logged (a serializer, so a new call
// site needs nothing), urls by the rule every shown URL follows (secret-shapes.ts), top-level secret
// fields by path, and nothing logs a body. Header values are what clients wrote: control characters
// in them are logged as visible escapes (Node refuses a request target holding any, or anything
// outside ASCII). Repeated warnings (an unreachable profile API at thousands of requests per second)
// are throttled.

import { createRequire } from 'node:module';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { credentialHeaders } from './credentials.js';
import { isSecretName, maskUrls } from './secret-shapes.js';
import { escapeControlChars } from './display.js';

export type { Logger };

const CENSOR = '[redacted]';
const SECRET_FIELDS = ['token', 'secret', 'clientSecret', 'password', 'pass'];

/** Top-level fields that are secrets themselves, by path (headers and urls have serializers). */
export function redactedPaths(): string[] {
  return SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]);
}

/** A copy of `headers` with every secret-carrying value censored; `always` names more (lower case). */
export function redactHeaders(headers: unknown, always: ReadonlySet<string> = new Set()): unknown {
  if (headers instanceof Headers) headers = Object.fromEntries(headers);
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = always.has(name.toLowerCase()) || isSecretName(name) ? CENSOR : shown(value);
  }
  return out;
}

/**
 * A header value as a log line may carry it: what the client sent, with the characters of the text
 * rule (schemas/text.ts) as visible escapes. pino escapes C0 only; C1 and bidi controls would reach
 * whoever reads the log in a terminal.
 */
function shown(value: unknown): unknown {
  if (typeof value === 'string') return escapeControlChars(value);
  return Array.isArray(value) ? value.map(shown) : value;
}

/** A url (a request's target, a configured server) as every URL is shown: secret parts masked. */
function redactUrl(url: unknown): unknown {
  return typeof url === 'string' ? maskUrls(url) : url;
}

/**
 * A request logged whole (an IncomingMessage, a fastify request, or a plain object): only what a
 * line needs, its headers and url redacted. A raw request would drag its socket into the log.
 */
function redactRequest(request: unknown, always: ReadonlySet<string>): unknown {
  if (request === null || typeof request !== 'object') return request;
  const { id, method, url, headers } = request as { id?: unknown; method?: unknown; url?: unknown; headers?: unknown };
  return { id, method, url: redactUrl(url), headers: redactHeaders(headers, always) };
}

export interface LoggerSettings {
  level: string;
  pretty: boolean;
  nodeId?: string;
  service?: string;
  /**
   * Extra client-credential prefixes: their -Secret headers are redacted by name (their shape alone
   * would do; the names come from credentials.ts, the one place that knows them).
   */
  clientHeaderPrefixes?: readonly string[];
  /** Tests capture output here instead of stdout. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(settings: LoggerSettings): Logger {
  const always = new Set(credentialHeaders(settings.clientHeaderPrefixes ?? []).map((h) => h.secret));
  const options: LoggerOptions = {
    level: settings.level,
    redact: { paths: redactedPaths(), censor: CENSOR },
    base: { node: settings.nodeId, service: settings.service },
    serializers: {
      err: pino.stdSerializers.err,
      headers: (h: unknown) => redactHeaders(h, always),
      url: redactUrl,
      req: (r: unknown) => redactRequest(r, always),
      request: (r: unknown) => redactRequest(r, always),
    },
  };
  if (settings.destination !== undefined) return pino(options, settings.destination);
  if (settings.pretty) {
    if (prettyInstalled()) return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
    const logger = pino(options);
    warnPrettyMissingOnce(logger);
    return logger;
  }
  return pino(options);
}

/**
 * pino-pretty is a development dependency: a production install (the image) lacks it, and LOG_PRETTY
 * (or its auto on a terminal, `docker run -t`) must not stop the relay there, so it logs JSON.
 */
function prettyInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

let prettyMissingWarned = false;

/** Said once per process, though a process may create several loggers. */
function warnPrettyMissingOnce(logger: Logger): void {
  if (prettyMissingWarned) return;
  prettyMissingWarned = true;
  logger.warn('LOG_PRETTY is on but pino-pretty, a development dependency, is not installed; logging JSON');
}

/**
 * Logs a warning once per key and interval; the next one after the interval says how many were
 * suppressed meanwhile. For conditions that repeat per request while they last.
 */
export class ThrottledWarnings {
  private readonly logger: Pick<Logger, 'warn'>;
  private readonly intervalMs: number;
  private readonly state = new Map<string, { last: number; suppressed: number }>();
  private readonly clock: () => number;

  constructor(logger: Pick<Logger, 'warn'>, intervalMs = 10_000, clock: () => number = Date.now) {
    this.logger = logger;
    this.intervalMs = intervalMs;
    this.clock = clock;
  }

  warn(key: string, fields: Record<string, unknown>, message: string): void {
    const now = this.clock();
    const s = this.state.get(key);
    if (s !== undefined && now - s.last < this.intervalMs) {
      s.suppressed++;
      return;
    }
    const suppressed = s?.suppressed ?? 0;
    this.state.set(key, { last: now, suppressed: 0 });
    this.logger.warn(suppressed > 0 ? { ...fields, suppressed } : fields, message);
  }
}
