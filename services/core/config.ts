// Configuration comes from the environment only. Each service has one TypeBox schema listing every
// variable with its default and meaning; it is validated once at start-up, every problem is reported
// together, and the same schema produces infra/env/*.env.example and `relay config check`.

import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { maskUrlCredentials } from './display.js';
import { DURATION_PATTERN, parseDuration, parseSize, SIZE_PATTERN } from './units.js';

const secret = { 'x-secret': true } as const;

const CommonEnv = {
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
    description: 'development, production or test; production refuses development-only settings such as PROFILE_API_URL=offline.',
  }),
  HOST: Type.String({ default: '0.0.0.0', pattern: '^\\S+$', description: 'Address the HTTP server listens on.' }),
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535, description: 'HTTP port (0 picks a free one).' }),
  RELAY_NODE_ID: Type.String({
    default: '',
    pattern: '^[A-Za-z0-9_-]*$',
    'x-expected': 'letters, digits, "-" and "_" only',
    maxLength: 64,
    description: 'Name of this process in the mesh (stream ownership, metrics). Empty: <hostname>-<pid>.',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'pino log level.' },
  ),
  LOG_PRETTY: Type.Union([Type.Literal('auto'), Type.Literal('true'), Type.Literal('false')], {
    default: 'auto',
    description: 'Human-readable logs; auto means only when stdout is a terminal.',
  }),
  NATS_URL: Type.String({
    default: 'nats://127.0.0.1:4222',
    minLength: 1,
    description: 'Comma-separated NATS server URLs.',
  }),
  NATS_USER: Type.String({ default: '', description: 'NATS user name, if the servers require one.' }),
  NATS_PASSWORD: Type.String({ default: '', description: 'NATS password.', ...secret }),
  NATS_TOKEN: Type.String({ default: '', description: 'NATS authentication token.', ...secret }),
  NATS_CREDS_FILE: Type.String({ default: '', description: 'Path to a NATS .creds file (JWT + nkey).' }),
  PROFILE_API_URL: Type.String({
    default: 'https://api.minecraftservices.com/minecraft/profile',
    minLength: 1,
    description: 'Game profile API checked with each session token; "offline" accepts Bearer offline:<name> (development only).',
  }),
  PROFILE_API_TIMEOUT: Type.String({ default: '5s', pattern: DURATION_PATTERN, description: 'Timeout of one profile API call.' }),
  PROFILE_CACHE_TTL: Type.String({ default: '10m', pattern: DURATION_PATTERN, description: 'How long a valid session is cached.' }),
  PROFILE_NEGATIVE_CACHE_TTL: Type.String({
    default: '30s',
    pattern: DURATION_PATTERN,
    description: 'How long an invalid session is cached.',
  }),
  CLIENT_HEADER_PREFIXES: Type.String({
    default: '',
    pattern: '^[A-Za-z0-9-]*(,[A-Za-z0-9-]+)*$',
    'x-expected': 'comma-separated header prefixes made of letters, digits and "-"',
    description: 'Extra client-credential header prefixes, comma-separated: X-Hackware accepts X-Hackware-Client-ID / -Secret.',
  }),
  STREAM_MAX_AGE: Type.String({ default: '24h', pattern: DURATION_PATTERN, description: 'How long the event log keeps a payload.' }),
  STREAM_MAX_BYTES: Type.String({ default: '1GiB', pattern: SIZE_PATTERN, description: 'Size bound of the event log; oldest go first.' }),
  STREAM_REPLICAS: Type.Integer({ default: 1, minimum: 1, maximum: 5, description: 'Replicas of the event log (3 on a cluster).' }),
  STREAM_STORAGE: Type.Union([Type.Literal('file'), Type.Literal('memory')], { default: 'file', description: 'Event log storage.' }),
  STREAM_DUPLICATE_WINDOW: Type.String({
    default: '2m',
    pattern: DURATION_PATTERN,
    description: 'Window in which a resent POST with the same Idempotency-Key is stored once.',
  }),
  STREAM_MAX_MSGS_PER_CHANNEL: Type.Integer({
    default: 10_000,
    minimum: 0,
    description:
      "Payloads the event log keeps per channel (JetStream's per-subject limit; oldest go first); a flood in one channel then ages out only that channel's history. 0: no per-channel limit.",
  }),
  KV_REPLICAS: Type.Integer({ default: 1, minimum: 1, maximum: 5, description: 'Replicas of the keys, bans and streams buckets.' }),
  // Read by every service: whichever process creates or updates the bucket applies the same value.
  CLAIM_TTL: Type.String({
    default: '1h',
    pattern: DURATION_PATTERN,
    description: 'Stream ownership records expire after this unless refreshed (live streams refresh at half of it).',
  }),
  SHUTDOWN_TIMEOUT: Type.String({
    default: '10s',
    pattern: DURATION_PATTERN,
    description: 'Longest a graceful shutdown waits; then every remaining connection is closed.',
  }),
  BODY_TIMEOUT: Type.String({
    default: '10s',
    pattern: DURATION_PATTERN,
    description: 'Time a client has to send its request headers and body (408 request_timeout beyond); streams are not affected once open.',
  }),
  PROFILE_API_CONCURRENCY: Type.Integer({
    default: 64,
    minimum: 1,
    maximum: 4096,
    description: 'Profile API look-ups in flight at once; a quarter is kept for requests with valid client credentials.',
  }),
  PROFILE_API_MAX_QUEUE: Type.Integer({
    default: 1000,
    minimum: 0,
    description: 'Look-ups that may wait for a free slot, in each of the two queues (valid credentials, the rest); beyond it, 503 profile_api_busy with Retry-After (never a ban).',
  }),
};

const IngressEnv = {
  BODY_LIMIT: Type.String({ default: '1MiB', pattern: SIZE_PATTERN, description: 'Largest POST body (413 beyond).' }),
  BATCH_MAX_ENTRIES: Type.Integer({ default: 256, minimum: 1, maximum: 100_000, description: 'Most entries in one POST (413 beyond).' }),
  RATE_LIMIT_PER_SECOND: Type.Number({
    default: 200,
    minimum: 0,
    description: 'Entries per second one account (or bridge key) may post; 0 turns the limit off.',
  }),
  RATE_LIMIT_BURST: Type.Integer({ default: 1000, minimum: 1, description: 'Entries one account may post at once before the rate applies.' }),
  RATE_LIMIT_BYTES_PER_SECOND: Type.String({
    default: '256KiB',
    pattern: SIZE_PATTERN,
    description: 'Payload bytes per second one account (or bridge key) may post; 0 turns the byte limit off.',
  }),
  RATE_LIMIT_BYTES_BURST: Type.String({
    default: '4MiB',
    pattern: SIZE_PATTERN,
    description: 'Payload bytes one account may post at once before the byte rate applies.',
  }),
  ENTRY_MAX_BYTES: Type.String({
    default: '64KiB',
    pattern: SIZE_PATTERN,
    description: "Largest single entry as stored (payload JSON); 413 entry_too_large beyond, or beyond NATS's max_payload if that is smaller.",
  }),
  PUBLISH_TIMEOUT: Type.String({ default: '5s', pattern: DURATION_PATTERN, description: 'How long a JetStream acknowledgement may take.' }),
};

const GatewayEnv = {
  KEEPALIVE_INTERVAL: Type.String({
    default: '10s',
    pattern: DURATION_PATTERN,
    description: 'Server keepalive pair interval; must stay below the 15 s clients wait.',
  }),
  STREAM_QUEUE_MAX_BYTES: Type.String({
    default: '4MiB',
    pattern: SIZE_PATTERN,
    description: 'Bytes a stream may have waiting for a slow client before it is closed.',
  }),
  NODE_TIMEOUT: Type.String({
    default: '15s',
    pattern: DURATION_PATTERN,
    description: 'A gateway whose heartbeat is not seen for this long is taken for dead and its stream claims are removed.',
  }),
  MAX_STREAMS_PER_ACCOUNT: Type.Integer({
    default: 8,
    minimum: 0,
    description: 'Streams one account may hold across the mesh (on different channels); 429 too_many_streams beyond. 0: no limit.',
  }),
  MAX_STREAMS_PER_KEY: Type.Integer({
    default: 64,
    minimum: 0,
    description: 'Streams opened without a session (bridge streams) one API key may hold across the mesh; 429 too_many_streams beyond. 0: no limit.',
  }),
  RETRY_MIN: Type.String({ default: '1s', pattern: DURATION_PATTERN, description: 'Shortest retry: a draining gateway tells clients.' }),
  RETRY_MAX: Type.String({ default: '5s', pattern: DURATION_PATTERN, description: 'Longest retry: a draining gateway tells clients.' }),
};

const DevEnv = {
  DEV_NATS: Type.Union([Type.Literal('auto'), Type.Literal('true'), Type.Literal('false')], {
    default: 'auto',
    description: 'npm start only: start a local nats-server under .data/ (auto: when NATS_URL is not set).',
  }),
};

export const ENV_SCHEMAS = {
  ingress: Type.Object({ ...CommonEnv, ...IngressEnv }),
  gateway: Type.Object({ ...CommonEnv, ...GatewayEnv }),
  all: Type.Object({ ...CommonEnv, ...IngressEnv, ...GatewayEnv, ...DevEnv }),
} as const;
export type ServiceKind = keyof typeof ENV_SCHEMAS;
type AllEnv = Static<(typeof ENV_SCHEMAS)['all']>;

export interface RelayConfig {
  service: ServiceKind;
  env: Record<string, string | number>;
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  port: number;
  nodeId: string;
  logLevel: string;
  logPretty: boolean;
  nats: { servers: string[]; user?: string; pass?: string; token?: string; credsFile?: string };
  profile: { url: string | 'offline'; timeoutMs: number; cacheTtlMs: number; negativeCacheTtlMs: number; concurrency: number; maxQueue: number };
  clientHeaderPrefixes: string[];
  stream: {
    maxAgeMs: number;
    maxBytes: number;
    replicas: number;
    storage: 'file' | 'memory';
    duplicateWindowMs: number;
    maxMsgsPerChannel: number;
  };
  kvReplicas: number;
  claimTtlMs: number;
  shutdownTimeoutMs: number;
  bodyTimeoutMs: number;
  ingress: {
    bodyLimit: number;
    batchMax: number;
    ratePerSecond: number;
    rateBurst: number;
    bytesPerSecond: number;
    bytesBurst: number;
    entryMaxBytes: number;
    publishTimeoutMs: number;
  };
  gateway: {
    keepaliveMs: number;
    queueMaxBytes: number;
    nodeTimeoutMs: number;
    retryMinMs: number;
    retryMaxMs: number;
    maxStreamsPerAccount: number;
    maxStreamsPerKey: number;
  };
  devNats: 'auto' | 'true' | 'false';
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const envAjv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false, verbose: true });
const validators = {
  ingress: envAjv.compile(ENV_SCHEMAS.ingress),
  gateway: envAjv.compile(ENV_SCHEMAS.gateway),
  all: envAjv.compile(ENV_SCHEMAS.all),
};

export function envVariables(service: ServiceKind): TProperties {
  return (ENV_SCHEMAS[service] as TObject).properties;
}

export function isSecretVariable(name: string): boolean {
  const schema = ENV_SCHEMAS.all.properties[name as keyof AllEnv] as Record<string, unknown> | undefined;
  return schema?.['x-secret'] === true;
}

/** Reads and checks the environment for one service; throws ConfigError listing every problem. */
export function loadConfig(service: ServiceKind, source: NodeJS.ProcessEnv = process.env): RelayConfig {
  const props = envVariables(service);
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(props)) {
    const value = source[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const validate = validators[service];
  const problems: string[] = [];
  const valid = validate(raw);
  // One line per variable: several keywords (anyOf and each branch) may fail for one value.
  const failed = new Map<string, string>();
  for (const e of valid ? [] : (validate.errors ?? [])) {
    const name = e.instancePath.replace(/^\//, '');
    if (!failed.has(name) || e.keyword === 'anyOf') failed.set(name, envProblem(e, source));
  }
  problems.push(...failed.values());
  const env = raw as AllEnv;
  problems.push(...crossChecks(service, env, new Set(failed.keys())));
  if (problems.length > 0) throw new ConfigError(problems);
  return build(service, env);
}

function envProblem(e: ErrorObject, source: NodeJS.ProcessEnv): string {
  const name = e.instancePath.replace(/^\//, '');
  const schema = (e.parentSchema ?? {}) as Record<string, unknown>;
  const shown = isSecretVariable(name) ? '(hidden)' : JSON.stringify(source[name] ?? '');
  return `${name} ${expectation(e, schema)} (got ${shown}).`;
}

/** What a variable must be, in words. */
function expectation(e: ErrorObject, schema: Record<string, unknown>): string {
  const range = (): string => {
    const min = schema['minimum'];
    const max = schema['maximum'];
    if (min !== undefined && max !== undefined) return ` from ${String(min)} to ${String(max)}`;
    if (min !== undefined) return ` of at least ${String(min)}`;
    if (max !== undefined) return ` of at most ${String(max)}`;
    return '';
  };
  switch (e.keyword) {
    case 'type':
      return schema['type'] === 'integer' ? `must be a whole number${range()}` : `must be a number${range()}`;
    case 'minimum':
    case 'maximum':
      return `must be a ${schema['type'] === 'integer' ? 'whole number' : 'number'}${range()}`;
    case 'pattern':
      if (schema['pattern'] === DURATION_PATTERN) return 'must be a duration like 500ms, 30s, 10m, 12h or 7d';
      if (schema['pattern'] === SIZE_PATTERN) return 'must be a size like 1048576, 512KiB, 1MiB or 2GB';
      if (schema['pattern'] === '^\\S+$') return 'must not contain spaces';
      if (typeof schema['x-expected'] === 'string') return `must be ${schema['x-expected']}`;
      return `must match ${String(schema['pattern'])}`;
    case 'anyOf': {
      const options = Array.isArray(schema['anyOf']) ? (schema['anyOf'] as Array<{ const?: unknown }>).map((o) => String(o.const)) : [];
      return `must be one of ${options.join(', ')}`;
    }
    case 'maxLength':
      return `must be at most ${String(schema['maxLength'])} characters`;
    case 'minLength':
      return 'must not be empty';
    default:
      return e.message ?? 'is invalid';
  }
}

/** Durations that never become a timer (retention, cache lifetimes); every other one does. */
const NOT_TIMERS = new Set(['STREAM_MAX_AGE', 'STREAM_DUPLICATE_WINDOW', 'PROFILE_CACHE_TTL', 'PROFILE_NEGATIVE_CACHE_TTL']);
/** Node's timers hold at most 2^31-1 ms and fire at once beyond it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Durations and sizes that match their pattern but no timer or counter can hold. */
function rangeChecks(service: ServiceKind, env: AllEnv, invalid: Set<string>): string[] {
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(envVariables(service))) {
    const value = (env as Record<string, unknown>)[name];
    if (invalid.has(name) || typeof value !== 'string') continue;
    const pattern = (schema as Record<string, unknown>)['pattern'];
    if (pattern === DURATION_PATTERN) {
      const ms = parseDuration(value);
      if (ms === null || !Number.isSafeInteger(ms) || (!NOT_TIMERS.has(name) && ms > MAX_TIMER_MS)) {
        problems.push(`${name} is too long (got ${value}); at most ${NOT_TIMERS.has(name) ? 'about 285,000 years' : '24d'}.`);
        invalid.add(name);
      }
    } else if (pattern === SIZE_PATTERN && !Number.isSafeInteger(parseSize(value))) {
      problems.push(`${name} is too large (got ${value}).`);
      invalid.add(name);
    }
  }
  return problems;
}

function crossChecks(service: ServiceKind, env: AllEnv, given: ReadonlySet<string>): string[] {
  const invalid = new Set(given);
  const problems = rangeChecks(service, env, invalid);
  const ok = (...names: string[]): boolean => names.every((n) => !invalid.has(n));
  if (ok('NATS_URL')) {
    for (const url of env.NATS_URL.split(',').map((s) => s.trim())) {
      if (!/^(nats|tls|ws|wss):\/\/[^\s/]+$|^[^\s:/]+:\d+$/.test(url)) {
        problems.push(`NATS_URL has "${maskUrlCredentials(url)}", which is not a NATS URL like nats://127.0.0.1:4222.`);
      }
    }
  }
  if (env.NATS_CREDS_FILE !== '' && !existsSync(env.NATS_CREDS_FILE)) {
    problems.push(`NATS_CREDS_FILE names ${JSON.stringify(env.NATS_CREDS_FILE)}, which does not exist.`);
  }
  if (ok('PROFILE_API_URL', 'NODE_ENV')) {
    if (env.PROFILE_API_URL === 'offline') {
      if (env.NODE_ENV === 'production') {
        problems.push('PROFILE_API_URL=offline accepts anyone who names a player; it is refused when NODE_ENV=production.');
      }
    } else if (!/^https?:\/\/\S+$/.test(env.PROFILE_API_URL)) {
      problems.push(`PROFILE_API_URL must be an http(s) URL or "offline" (got ${JSON.stringify(maskUrlCredentials(env.PROFILE_API_URL))}).`);
    }
  }
  if (service !== 'ingress') {
    if (ok('KEEPALIVE_INTERVAL')) {
      const keepalive = parseDuration(env.KEEPALIVE_INTERVAL)!;
      if (keepalive < 1000 || keepalive >= 15_000) {
        problems.push(`KEEPALIVE_INTERVAL must be at least 1s and below 15s, the time clients wait before reconnecting (got ${env.KEEPALIVE_INTERVAL}).`);
      }
    }
    if (ok('RETRY_MIN', 'RETRY_MAX') && parseDuration(env.RETRY_MIN)! > parseDuration(env.RETRY_MAX)!) {
      problems.push(`RETRY_MIN (${env.RETRY_MIN}) must not exceed RETRY_MAX (${env.RETRY_MAX}).`);
    }
    if (ok('NODE_TIMEOUT') && parseDuration(env.NODE_TIMEOUT)! < 1000) problems.push(`NODE_TIMEOUT must be at least 1s (got ${env.NODE_TIMEOUT}).`);
  }
  if (ok('CLAIM_TTL') && parseDuration(env.CLAIM_TTL)! < 60_000) problems.push(`CLAIM_TTL must be at least 1m (got ${env.CLAIM_TTL}).`);
  if (ok('BODY_TIMEOUT') && parseDuration(env.BODY_TIMEOUT)! < 100) problems.push(`BODY_TIMEOUT must be at least 100ms (got ${env.BODY_TIMEOUT}).`);
  if (ok('STREAM_DUPLICATE_WINDOW', 'STREAM_MAX_AGE') && parseDuration(env.STREAM_DUPLICATE_WINDOW)! > parseDuration(env.STREAM_MAX_AGE)!) {
    problems.push('STREAM_DUPLICATE_WINDOW must not exceed STREAM_MAX_AGE.');
  }
  return problems;
}

function build(service: ServiceKind, env: AllEnv): RelayConfig {
  const ms = (v: string | undefined, fallback: string): number => parseDuration(v ?? fallback)!;
  const bytes = (v: string | undefined, fallback: string): number => parseSize(v ?? fallback)!;
  const opt = (v: string): string | undefined => (v === '' ? undefined : v);
  const nats: RelayConfig['nats'] = { servers: env.NATS_URL.split(',').map((s) => s.trim()) };
  if (env.NATS_USER !== '') nats.user = env.NATS_USER;
  if (env.NATS_PASSWORD !== '') nats.pass = env.NATS_PASSWORD;
  if (env.NATS_TOKEN !== '') nats.token = env.NATS_TOKEN;
  if (env.NATS_CREDS_FILE !== '') nats.credsFile = env.NATS_CREDS_FILE;
  return {
    service,
    env: env as unknown as Record<string, string | number>,
    nodeEnv: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    nodeId: opt(env.RELAY_NODE_ID) ?? `${hostname().replace(/[^A-Za-z0-9_-]/g, '-')}-${process.pid}`,
    logLevel: env.LOG_LEVEL,
    logPretty: env.LOG_PRETTY === 'true' || (env.LOG_PRETTY === 'auto' && process.stdout.isTTY === true),
    nats,
    profile: {
      url: env.PROFILE_API_URL,
      timeoutMs: ms(env.PROFILE_API_TIMEOUT, '5s'),
      cacheTtlMs: ms(env.PROFILE_CACHE_TTL, '10m'),
      negativeCacheTtlMs: ms(env.PROFILE_NEGATIVE_CACHE_TTL, '30s'),
      concurrency: env.PROFILE_API_CONCURRENCY,
      maxQueue: env.PROFILE_API_MAX_QUEUE,
    },
    clientHeaderPrefixes: env.CLIENT_HEADER_PREFIXES.split(',').map((s) => s.trim()).filter((s) => s !== ''),
    stream: {
      maxAgeMs: ms(env.STREAM_MAX_AGE, '24h'),
      maxBytes: bytes(env.STREAM_MAX_BYTES, '1GiB'),
      replicas: env.STREAM_REPLICAS,
      storage: env.STREAM_STORAGE,
      duplicateWindowMs: ms(env.STREAM_DUPLICATE_WINDOW, '2m'),
      maxMsgsPerChannel: env.STREAM_MAX_MSGS_PER_CHANNEL,
    },
    kvReplicas: env.KV_REPLICAS,
    claimTtlMs: ms(env.CLAIM_TTL, '1h'),
    shutdownTimeoutMs: ms(env.SHUTDOWN_TIMEOUT, '10s'),
    bodyTimeoutMs: ms(env.BODY_TIMEOUT, '10s'),
    ingress: {
      bodyLimit: bytes(env.BODY_LIMIT, '1MiB'),
      batchMax: env.BATCH_MAX_ENTRIES ?? 256,
      ratePerSecond: env.RATE_LIMIT_PER_SECOND ?? 200,
      rateBurst: env.RATE_LIMIT_BURST ?? 1000,
      bytesPerSecond: bytes(env.RATE_LIMIT_BYTES_PER_SECOND, '256KiB'),
      bytesBurst: bytes(env.RATE_LIMIT_BYTES_BURST, '4MiB'),
      entryMaxBytes: bytes(env.ENTRY_MAX_BYTES, '64KiB'),
      publishTimeoutMs: ms(env.PUBLISH_TIMEOUT, '5s'),
    },
    gateway: {
      keepaliveMs: ms(env.KEEPALIVE_INTERVAL, '10s'),
      queueMaxBytes: bytes(env.STREAM_QUEUE_MAX_BYTES, '4MiB'),
      nodeTimeoutMs: ms(env.NODE_TIMEOUT, '15s'),
      retryMinMs: ms(env.RETRY_MIN, '1s'),
      retryMaxMs: ms(env.RETRY_MAX, '5s'),
      maxStreamsPerAccount: env.MAX_STREAMS_PER_ACCOUNT ?? 8,
      maxStreamsPerKey: env.MAX_STREAMS_PER_KEY ?? 64,
    },
    devNats: env.DEV_NATS ?? 'auto',
  };
}

/** The effective configuration as `relay config check` prints it: every variable, secrets masked. */
export function describeConfig(config: RelayConfig): Array<{ name: string; value: string; description: string }> {
  const props = envVariables(config.service);
  return Object.entries(props).map(([name, schema]) => {
    const value = config.env[name];
    // URLs may carry user:password@ (NATS_URL, PROFILE_API_URL): shown as ***@. Only URLs: a path
    // such as NATS_CREDS_FILE may hold an "@" that hides nothing.
    const shown =
      value === undefined || value === '' ? '' : isSecretVariable(name) ? '********' : name.endsWith('_URL') ? maskUrlCredentials(String(value)) : String(value);
    return { name, value: shown, description: String((schema as Record<string, unknown>)['description'] ?? '') };
  });
}

/** The text of infra/env/<service>.env.example: every variable with its default and meaning. */
export function envExample(service: ServiceKind): string {
  const title = { ingress: 'the ingress (relay serve ingress)', gateway: 'the gateway (relay serve gateway)', all: 'both services in one process (relay serve all / npm start)' }[service];
  const lines = [
    `# Environment of ${title}.`,
    '# Generated from the configuration schema (services/core/config.ts) by npm run env-examples;',
    '# a test fails when this file and the schema disagree. Every line shows the default.',
    '',
  ];
  for (const [name, schema] of Object.entries(envVariables(service))) {
    const s = schema as Record<string, unknown>;
    const description = String(s['description'] ?? '');
    for (const line of wrap(description, 98)) lines.push(`# ${line}`);
    lines.push(`${isSecretVariable(name) || s['default'] === '' ? '# ' : ''}${name}=${String(s['default'] ?? '')}`, '');
  }
  return lines.join('\n');
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + word.length + 1 > width) {
      out.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') out.push(line);
  return out;
}
