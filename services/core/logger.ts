// pino, with every place a secret could sit redacted. Tokens and client secrets never reach a log
// line: request headers are redacted by path wherever they are logged, and nothing logs a body.
// Repeated warnings (an unreachable profile API at thousands of requests per second) are throttled.

import pino, { type Logger, type LoggerOptions } from 'pino';
import { BUILTIN_PREFIXES } from './credentials.js';

export type { Logger };

const SECRET_FIELDS = ['token', 'secret', 'clientSecret', 'password', 'pass'];

/** Every path a secret can take in a log object, including the secret headers of extra prefixes. */
export function redactedPaths(extraPrefixes: readonly string[] = []): string[] {
  const secretHeaders = ['authorization', 'cookie', 'proxy-authorization', 'idempotency-key'];
  for (const p of [...BUILTIN_PREFIXES, ...extraPrefixes.map((x) => (x.endsWith('-') ? x : `${x}-`))]) {
    secretHeaders.push(`${p}client-secret`.toLowerCase());
  }
  const paths: string[] = [];
  for (const base of ['headers', 'req.headers', 'request.headers']) {
    for (const h of secretHeaders) paths.push(`${base}["${h}"]`);
  }
  for (const f of SECRET_FIELDS) paths.push(f, `*.${f}`);
  return paths;
}

export interface LoggerSettings {
  level: string;
  pretty: boolean;
  nodeId?: string;
  service?: string;
  /** Extra client-credential prefixes: their -Secret headers are redacted too. */
  clientHeaderPrefixes?: readonly string[];
  /** Tests capture output here instead of stdout. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    redact: { paths: redactedPaths(settings.clientHeaderPrefixes), censor: '[redacted]' },
    base: { node: settings.nodeId, service: settings.service },
    serializers: { err: pino.stdSerializers.err },
  };
  if (settings.destination !== undefined) return pino(options, settings.destination);
  if (settings.pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(options);
}

/**
 * Logs a warning once per key and interval; the next one after the interval says how many were
 * suppressed meanwhile. For conditions that repeat per request while they last.
 */
export class ThrottledWarnings {
  private readonly logger: Logger;
  private readonly intervalMs: number;
  private readonly state = new Map<string, { last: number; suppressed: number }>();

  constructor(logger: Logger, intervalMs = 10_000) {
    this.logger = logger;
    this.intervalMs = intervalMs;
  }

  warn(key: string, fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
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
