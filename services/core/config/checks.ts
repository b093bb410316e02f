// What the schema cannot say about one variable alone: durations and sizes no timer or counter can
// hold, and rules between variables. Each check skips a variable already refused, so an operator
// gets one sentence per mistake.

import { MIN_RETRY_MS, STREAM_TIMINGS } from '../../../schemas/stream-timings.js';
import { parseDuration, parseSize } from '../units.js';
import { parseAllowedHosts } from './admin-hosts.js';
import { parseAdminTokens } from './admin-tokens.js';
import { natsAccessProblems } from './nats-access.js';
import { regionProblems } from './region-env.js';
import { envVariables, type ServiceKind } from './schema.js';
import { quoted } from './wording.js';

/** Node's timers hold at most 2^31-1 ms and fire at once beyond it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type Values = Readonly<Record<string, unknown>>;

/** Durations and sizes that match their pattern but no timer or counter can hold. */
function rangeChecks(service: ServiceKind, values: Values, invalid: Set<string>): string[] {
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(envVariables(service))) {
    const value = values[name];
    if (invalid.has(name) || typeof value !== 'string') continue;
    if (schema['x-unit'] === 'duration') {
      const timer = schema['x-timer'] !== false;
      const ms = parseDuration(value);
      if (ms === null || !Number.isSafeInteger(ms) || (timer && ms > MAX_TIMER_MS)) {
        problems.push(`${name} is too long (got ${value}); at most ${timer ? '24d' : 'about 285,000 years'}.`);
        invalid.add(name);
      }
    } else if (schema['x-unit'] === 'size' && !Number.isSafeInteger(parseSize(value))) {
      problems.push(`${name} is too large (got ${value}).`);
      invalid.add(name);
    }
  }
  return problems;
}

/** Every problem beyond the schema's own; `refused` names the variables the schema refused. */
export function crossChecks(service: ServiceKind, values: Values, refused: ReadonlySet<string>): string[] {
  const invalid = new Set(refused);
  const problems = rangeChecks(service, values, invalid);
  const ok = (...names: string[]): boolean => names.every((n) => !invalid.has(n));
  const text = (name: string): string => {
    const v = values[name];
    return typeof v === 'string' ? v : '';
  };
  const ms = (name: string): number => parseDuration(text(name)) ?? 0;
  if (ok('NATS_URL')) {
    for (const url of text('NATS_URL').split(',').map((s) => s.trim())) {
      if (!/^(nats|tls|ws|wss):\/\/[^\s/]+$|^[^\s:/]+:\d+$/.test(url)) {
        problems.push(`NATS_URL has ${quoted(url)}, which is not a NATS URL like nats://127.0.0.1:4222.`);
      }
    }
  }
  problems.push(...natsAccessProblems(text));
  problems.push(...regionProblems(service, text));
  if (ok('PROFILE_API_URL', 'NODE_ENV')) {
    const url = text('PROFILE_API_URL');
    if (url === 'offline') {
      if (text('NODE_ENV') === 'production') {
        problems.push('PROFILE_API_URL=offline accepts anyone who names a player; it is refused when NODE_ENV=production.');
      }
    } else if (!/^https?:\/\/\S+$/.test(url)) {
      problems.push(`PROFILE_API_URL must be an http(s) URL or "offline" (got ${quoted(url)}).`);
    }
  }
  if (service === 'gateway' || service === 'all') {
    if (ok('KEEPALIVE_INTERVAL')) {
      const keepalive = ms('KEEPALIVE_INTERVAL');
      if (keepalive < STREAM_TIMINGS.keepaliveMinMs || keepalive >= STREAM_TIMINGS.watchdogMs) {
        problems.push(
          `KEEPALIVE_INTERVAL must be at least ${STREAM_TIMINGS.keepaliveMinMs / 1000}s and below ${STREAM_TIMINGS.watchdogMs / 1000}s, the time clients wait before reconnecting (got ${text('KEEPALIVE_INTERVAL')}).`,
        );
      }
    }
    if (ok('RETRY_MIN') && ms('RETRY_MIN') < MIN_RETRY_MS) {
      problems.push(`RETRY_MIN must be at least ${MIN_RETRY_MS / 1000}s: a relay never advises an immediate reconnect (got ${text('RETRY_MIN')}).`);
      invalid.add('RETRY_MIN');
    }
    if (ok('RETRY_MIN', 'RETRY_MAX') && ms('RETRY_MIN') > ms('RETRY_MAX')) {
      problems.push(`RETRY_MIN (${text('RETRY_MIN')}) must not exceed RETRY_MAX (${text('RETRY_MAX')}).`);
    }
  }
  if (service !== 'ingress' && ok('NODE_TIMEOUT') && ms('NODE_TIMEOUT') < 1000) problems.push(`NODE_TIMEOUT must be at least 1s (got ${text('NODE_TIMEOUT')}).`);
  if (ok('ADMIN_TOKEN', 'ADMIN_TOKENS') && (service === 'admin' || service === 'all')) {
    const { tokens, problems: tokenProblems } = parseAdminTokens(text('ADMIN_TOKEN'), text('ADMIN_TOKENS'));
    problems.push(...tokenProblems);
    // npm start generates one; a deployed admin service without a token would answer nobody.
    if (service === 'admin' && tokens.length === 0) problems.push('The admin service needs ADMIN_TOKEN (or named ADMIN_TOKENS); generate one with: openssl rand -hex 24');
  }
  if (ok('ADMIN_HOST', 'ADMIN_ALLOWED_HOSTS') && (service === 'admin' || service === 'all')) {
    problems.push(...parseAllowedHosts(text('ADMIN_HOST'), text('ADMIN_ALLOWED_HOSTS')).problems);
  }
  if (ok('ADMIN_MAX_CONNECTIONS', 'ADMIN_MAX_CONNECTIONS_PER_ADDRESS') && (service === 'admin' || service === 'all')) {
    const total = Number(values['ADMIN_MAX_CONNECTIONS']);
    const perAddress = Number(values['ADMIN_MAX_CONNECTIONS_PER_ADDRESS']);
    // One address alone must never take every connection; 0 turns the cap off on purpose (behind a proxy).
    if (perAddress > total / 4) {
      problems.push(
        `ADMIN_MAX_CONNECTIONS_PER_ADDRESS (${perAddress}) must be at most a quarter of ADMIN_MAX_CONNECTIONS (${total}), so one address never takes every connection; 0 turns the per-address cap off.`,
      );
    }
  }
  if (ok('CLAIM_TTL') && ms('CLAIM_TTL') < 60_000) problems.push(`CLAIM_TTL must be at least 1m (got ${text('CLAIM_TTL')}).`);
  // A bound smaller than a few records would forget each key before its resend could arrive.
  if (ok('IDEMPOTENCY_MAX_BYTES') && (parseSize(text('IDEMPOTENCY_MAX_BYTES')) ?? 0) < 4096) {
    problems.push(`IDEMPOTENCY_MAX_BYTES must be at least 4KiB (got ${text('IDEMPOTENCY_MAX_BYTES')}).`);
  }
  if (ok('BODY_TIMEOUT') && ms('BODY_TIMEOUT') < 100) problems.push(`BODY_TIMEOUT must be at least 100ms (got ${text('BODY_TIMEOUT')}).`);
  if (ok('STREAM_DUPLICATE_WINDOW', 'STREAM_MAX_AGE') && ms('STREAM_DUPLICATE_WINDOW') > ms('STREAM_MAX_AGE')) {
    problems.push('STREAM_DUPLICATE_WINDOW must not exceed STREAM_MAX_AGE.');
  }
  return problems;
}
