// pino, with every place a secret could sit redacted. Tokens and client secrets never reach a log
// line: request headers are redacted by path, and nothing logs a body.

import pino, { type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["client-secret"]',
  'req.headers["x-client-secret"]',
  'req.headers["service-client-secret"]',
  'req.headers["x-service-client-secret"]',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  'secret',
  'clientSecret',
  'password',
  '*.token',
  '*.secret',
  '*.clientSecret',
  '*.password',
];

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
  const extra = (settings.clientHeaderPrefixes ?? []).map((p) => `req.headers["${p.toLowerCase()}-client-secret"]`);
  const options: LoggerOptions = {
    level: settings.level,
    redact: { paths: [...REDACTED_PATHS, ...extra], censor: '[redacted]' },
    base: { node: settings.nodeId, service: settings.service },
    serializers: {
      err: pino.stdSerializers.err,
    },
  };
  if (settings.destination !== undefined) return pino(options, settings.destination);
  if (settings.pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(options);
}
