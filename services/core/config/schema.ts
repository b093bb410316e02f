// The configuration schema: every environment variable of every service, its default (written here
// once), its meaning and its unit. The loader validates and converts from it, `relay config` describes
// it, and scripts/generate-env-examples.ts writes infra/env/*.env.example from it.

import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { DURATION_PATTERN, SIZE_PATTERN } from '../units.js';
import { MIN_RETRY_MS, STREAM_TIMINGS } from '../../../schemas/stream-timings.js';
import { TracingEnv } from './tracing-env.js';

/** Never echoed: not in error messages, `relay config` or the env examples. */
const secret = { 'x-secret': true } as const;
/** A duration that becomes a timer, so at most 24 days (Node's timers hold 2^31-1 ms). */
const duration = { pattern: DURATION_PATTERN, 'x-unit': 'duration' } as const;
/** A duration only compared or handed to NATS (retention, cache lifetimes): no timer bound. */
const lifetime = { pattern: DURATION_PATTERN, 'x-unit': 'duration', 'x-timer': false } as const;
/** Bytes, written like 512KiB or 1GiB. */
const size = { pattern: SIZE_PATTERN, 'x-unit': 'size' } as const;


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
  NATS_NKEY_SEED: Type.String({ default: '', description: 'NKey seed (SU...) of a NATS user that signs in with an nkey.', ...secret }),
  NATS_TLS_CA: Type.String({
    default: '',
    description: "CA certificate (PEM file) that signed the NATS servers' certificates. Any NATS_TLS_* setting makes the connection TLS only.",
  }),
  NATS_TLS_CERT: Type.String({ default: '', description: 'Client certificate (PEM file) for mutual TLS, with NATS_TLS_KEY.' }),
  NATS_TLS_KEY: Type.String({ default: '', description: 'Private key (PEM file) of NATS_TLS_CERT.' }),
  NATS_TLS_SERVER_NAME: Type.String({
    default: '',
    pattern: '^\\S*$',
    'x-expected': 'a host name without spaces',
    description: "Name the NATS servers' certificate must carry, when NATS_URL names them otherwise (by IP address, or through a load balancer).",
  }),
  PROFILE_API_URL: Type.String({
    default: 'https://api.minecraftservices.com/minecraft/profile',
    minLength: 1,
    description: 'Game profile API checked with each session token; "offline" accepts Bearer offline:<name> (development only).',
  }),
  PROFILE_API_TIMEOUT: Type.String({ default: '5s', ...duration, description: 'Timeout of one profile API call.' }),
  PROFILE_CACHE_TTL: Type.String({ default: '10m', ...lifetime, description: 'How long a valid session is cached.' }),
  PROFILE_NEGATIVE_CACHE_TTL: Type.String({
    default: '30s',
    ...lifetime,
    description: 'How long an invalid session is cached.',
  }),
  CLIENT_HEADER_PREFIXES: Type.String({
    default: '',
    pattern: '^[A-Za-z0-9-]*(,[A-Za-z0-9-]+)*$',
    'x-expected': 'comma-separated header prefixes made of letters, digits and "-"',
    description: 'Extra client-credential header prefixes, comma-separated: X-Hackware accepts X-Hackware-Client-ID / -Secret.',
  }),
  STREAM_MAX_AGE: Type.String({ default: '24h', ...lifetime, description: 'How long the event log keeps a payload. Applied by relay setup; a service only compares it with what NATS holds.' }),
  STREAM_MAX_BYTES: Type.String({ default: '1GiB', ...size, description: 'Size bound of the event log; oldest go first. Applied by relay setup; a service only compares it with what NATS holds.' }),
  STREAM_REPLICAS: Type.Integer({ default: 1, minimum: 1, maximum: 5, description: 'Replicas of the event log (3 on a cluster). Applied by relay setup; a service only compares it with what NATS holds.' }),
  STREAM_STORAGE: Type.Union([Type.Literal('file'), Type.Literal('memory')], { default: 'file', description: 'Event log storage. Applied by relay setup; a service only compares it with what NATS holds.' }),
  STREAM_DUPLICATE_WINDOW: Type.String({
    default: '2m',
    ...lifetime,
    description: 'Window in which a resent POST with the same Idempotency-Key is stored once. Applied by relay setup; a service only compares it with what NATS holds.',
  }),
  IDEMPOTENCY_MAX_BYTES: Type.String({
    default: '64MiB',
    ...size,
    description:
      'Size bound of the Idempotency-Key records (bucket relay-idempotency, about 213 bytes a keyed POST, kept STREAM_DUPLICATE_WINDOW). Full, the oldest records go first: a POST is never refused, and a resend of a forgotten key runs again (at-least-once). Applied by relay setup; a service only compares it with what NATS holds.',
  }),
  STREAM_MAX_MSGS_PER_CHANNEL: Type.Integer({
    default: 10_000,
    minimum: 0,
    description:
      "Payloads the event log keeps per channel (JetStream's per-subject limit; oldest go first); a flood in one channel then ages out only that channel's history. 0: no per-channel limit. Applied by relay setup; a service only compares it with what NATS holds.",
  }),
  AUDIT_MAX_AGE: Type.String({
    default: '365d',
    ...lifetime,
    description: 'How long the audit trail (keys created or revoked, bans added or lifted, and by whom) is kept. Applied by relay setup; a service only compares it with what NATS holds.',
  }),
  KV_REPLICAS: Type.Integer({ default: 1, minimum: 1, maximum: 5, description: 'Replicas of the keys, bans and streams buckets. Applied by relay setup; a service only compares it with what NATS holds.' }),
  CLAIM_TTL: Type.String({
    default: '1h',
    ...duration,
    description: 'Stream ownership records expire after this unless refreshed (live streams refresh at half of it). Applied by relay setup; a service only compares it with what NATS holds.',
  }),
  SHUTDOWN_TIMEOUT: Type.String({
    default: '10s',
    ...duration,
    description: 'Longest a graceful shutdown waits; then every remaining connection is closed.',
  }),
  BODY_TIMEOUT: Type.String({
    default: '10s',
    ...duration,
    description: 'Time a client has to send its request headers and body (408 request_timeout beyond); streams are not affected once open.',
  }),
  PROFILE_API_CONCURRENCY: Type.Integer({
    default: 64,
    minimum: 1,
    maximum: 4096,
    description: 'Profile API look-ups in flight at once; when all are taken, a freed one goes to the waiting client addresses in turn.',
  }),
  PROFILE_API_MAX_QUEUE: Type.Integer({
    default: 1000,
    minimum: 0,
    description: 'Look-ups that may wait for a free slot, all client addresses together; beyond it, 503 profile_api_busy with Retry-After (the relay is full, not the client over its share; never a ban).',
  }),
  PROFILE_API_PER_ADDRESS: Type.Integer({
    default: 8,
    minimum: 1,
    maximum: 100_000,
    description:
      'Look-ups one client address (IPv6: one PROFILE_API_IPV6_PREFIX block) may have running or waiting at once; beyond it, 429 too_many_session_checks with Retry-After (never a ban). Raise it for many players behind one NAT address.',
  }),
  PROFILE_API_RATE_PER_ADDRESS: Type.Number({
    default: 2,
    minimum: 0,
    description:
      'New profile API look-ups per second one client address may start (a token bucket; cached and remembered-invalid sessions cost nothing); beyond it, 429 too_many_session_checks with Retry-After (never a ban). 0 turns the limit off.',
  }),
  PROFILE_API_RATE_BURST: Type.Integer({
    default: 20,
    minimum: 1,
    description: 'New look-ups one client address may start at once before PROFILE_API_RATE_PER_ADDRESS applies.',
  }),
  PROFILE_API_IPV6_PREFIX: Type.Integer({
    default: 56,
    minimum: 32,
    maximum: 128,
    description:
      'IPv6 client addresses count as one address per block of this prefix length for the look-up limits and the connection caps (56: the block a home is usually given, so one home cannot take 256 shares with its /64s).',
  }),
  TRUSTED_PROXIES: Type.String({
    default: '',
    description:
      "Proxies whose X-Forwarded-For is believed (IPs, CIDRs, or loopback, linklocal, uniquelocal), comma-separated. Empty: nobody's; the socket's peer is the client. Behind nginx or HAProxy, name them here. Their connections are not capped per address and have no first-byte deadline.",
  }),
};

/** The client port, whichever verbs it serves. */
const ClientPortEnv = {
  MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({
    default: 1000,
    minimum: 0,
    description:
      'Connections one client address (IPv6: one PROFILE_API_IPV6_PREFIX block) may hold open to this process (streams and POSTs together); beyond it, new ones are reset at once, before anything is read. Peers named in TRUSTED_PROXIES are not capped. Raise it for many players behind one NAT address; 0: no cap.',
  }),
};

const IngressEnv = {
  BODY_LIMIT: Type.String({ default: '1MiB', ...size, description: 'Largest POST body (413 beyond).' }),
  BATCH_MAX_ENTRIES: Type.Integer({ default: 256, minimum: 1, maximum: 100_000, description: 'Most entries in one POST (413 beyond).' }),
  RATE_LIMIT_PER_SECOND: Type.Number({
    default: 200,
    minimum: 0,
    description: 'Entries per second one account (or bridge key) may post; 429 rate_limited with Retry-After beyond. 0 turns the limit off.',
  }),
  RATE_LIMIT_BURST: Type.Integer({ default: 1000, minimum: 1, description: 'Entries one account may post at once before the rate applies.' }),
  RATE_LIMIT_BYTES_PER_SECOND: Type.String({
    default: '256KiB',
    ...size,
    description: 'Payload bytes per second one account (or bridge key) may post; 429 rate_limited with Retry-After beyond. 0 turns the byte limit off.',
  }),
  RATE_LIMIT_BYTES_BURST: Type.String({
    default: '4MiB',
    ...size,
    description: 'Payload bytes one account may post at once before the byte rate applies.',
  }),
  ENTRY_MAX_BYTES: Type.String({
    default: '64KiB',
    ...size,
    description: "Largest single entry as stored (payload JSON); 413 entry_too_large beyond, or beyond NATS's max_payload if that is smaller.",
  }),
  PUBLISH_TIMEOUT: Type.String({ default: '5s', ...duration, description: 'How long a JetStream acknowledgement may take.' }),
};

const GatewayEnv = {
  KEEPALIVE_INTERVAL: Type.String({
    default: `${STREAM_TIMINGS.keepaliveMs / 1000}s`,
    ...duration,
    description: `Server keepalive pair interval; must stay below the ${STREAM_TIMINGS.watchdogMs / 1000} s clients wait.`,
  }),
  STREAM_QUEUE_MAX_BYTES: Type.String({
    default: '4MiB',
    ...size,
    description: 'Bytes a stream may have waiting for a slow client before it is closed.',
  }),
  META_AUTHORITATIVE_SENDER: Type.Union([Type.Literal('false'), Type.Literal('true')], {
    default: 'false',
    description:
      "true: every meta frame also carries the published proxy client's shape, userAgent and authoritativeSender {id, username} (the session's profile name; null for a bridge's envelope and the relay's keepalives), beside the spec's uuid, agent and channel, which are unchanged. As authoritative as the key that sent the frame: an envelope's id is whatever UUID its bridge named.",
  }),
  RESUME_WINDOW_BYTES: Type.String({
    default: '64MiB',
    ...size,
    description:
      'Recent frames each gateway keeps (all its channels together, oldest out first) to answer a Last-Event-ID resume from memory; older gaps are read from the event log. 0: keep none (a resume at the newest frame still costs no JetStream request).',
  }),
  NODE_TIMEOUT: Type.String({
    default: '15s',
    ...duration,
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
  STREAM_OPEN_RATE: Type.Number({
    default: 0.5,
    minimum: 0,
    description:
      'Stream opens per second one account (or a bridge key without a session) may make on this gateway, a token bucket (each open replays what was missed, and reopening replaces the previous stream, so MAX_STREAMS_PER_ACCOUNT never applies); 429 too_many_opens with Retry-After beyond, never a ban. 0 turns the limit off.',
  }),
  STREAM_OPEN_BURST: Type.Integer({
    default: 10,
    minimum: 1,
    description: 'Stream opens one account may make at once before STREAM_OPEN_RATE applies (reconnects with back-off and two copies of one account ping-ponging stay within it).',
  }),
  RETRY_MIN: Type.String({ default: `${MIN_RETRY_MS / 1000}s`, ...duration, description: `Shortest retry a draining gateway tells clients; at least ${MIN_RETRY_MS / 1000}s (schemas/stream-timings.ts MIN_RETRY_MS).` }),
  RETRY_MAX: Type.String({ default: '5s', ...duration, description: 'Longest retry: a draining gateway tells clients.' }),
};

const AdminEnv = {
  ADMIN_HOST: Type.String({
    default: '127.0.0.1',
    pattern: '^\\S+$',
    description: "Address the admin service (console and admin API) listens on; this machine only unless set (0.0.0.0 behind the operators' proxy).",
  }),
  ADMIN_ALLOWED_HOSTS: Type.String({
    default: '',
    description: 'Host names the admin service answers to besides localhost, 127.0.0.1, [::1] and ADMIN_HOST: comma-separated host or host:port (the name operators reach it by through a proxy); any other Host is refused with 421.',
  }),
  ADMIN_PORT: Type.Integer({ default: 8090, minimum: 0, maximum: 65535, description: 'Port of the admin service, never the client port (0 picks a free one).' }),
  ADMIN_MAX_CONNECTIONS: Type.Integer({
    default: 8192,
    minimum: 16,
    maximum: 65_536,
    description:
      'Connections the admin service takes, every address together (about 10 KiB each); beyond it, new ones are reset at once. The last resort: with the default per-address cap it takes 64 addresses to fill it, and they can.',
  }),
  ADMIN_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({
    default: 128,
    minimum: 0,
    description:
      'Connections one client address (IPv6: one PROFILE_API_IPV6_PREFIX block) may hold open to the admin service (room for all 64 live tails it allows and more); beyond it, new ones are reset at once, before anything is read. At most a quarter of ADMIN_MAX_CONNECTIONS. Peers named in TRUSTED_PROXIES are not capped (every operator arrives through them). 0: no per-address cap.',
  }),
  ADMIN_TOKEN: Type.String({
    default: '',
    description: 'Bearer token of the console and admin API, named "admin" in the audit trail; at least 24 characters. npm start generates one.',
    ...secret,
  }),
  ADMIN_TOKENS: Type.String({
    default: '',
    description: 'Several named tokens, name=token comma-separated (ana=...,ben=...), so the audit trail says who acted; with or instead of ADMIN_TOKEN.',
    ...secret,
  }),
};

const DevEnv = {
  DEV_NATS: Type.Union([Type.Literal('auto'), Type.Literal('true'), Type.Literal('false')], {
    default: 'auto',
    description: 'npm start only: start a local nats-server under .data/ (auto: when NATS_URL is not set).',
  }),
};

export const ENV_SCHEMAS = {
  ingress: Type.Object({ ...CommonEnv, ...ClientPortEnv, ...IngressEnv, ...TracingEnv }),
  gateway: Type.Object({ ...CommonEnv, ...ClientPortEnv, ...GatewayEnv, ...TracingEnv }),
  // NODE_TIMEOUT: the console judges a node's heartbeat the way the gateways do.
  admin: Type.Object({ ...CommonEnv, ...AdminEnv, NODE_TIMEOUT: GatewayEnv.NODE_TIMEOUT }),
  all: Type.Object({ ...CommonEnv, ...ClientPortEnv, ...IngressEnv, ...GatewayEnv, ...AdminEnv, ...DevEnv, ...TracingEnv }),
} as const;

export type ServiceKind = keyof typeof ENV_SCHEMAS;
/** Every variable, typed: what the loader hands the mapping once defaults are applied. */
export type Env = Static<(typeof ENV_SCHEMAS)['all']>;

export function envVariables(service: ServiceKind): TProperties {
  return (ENV_SCHEMAS[service] as TObject).properties;
}

/** A variable's schema keywords, annotations included (undefined for a name that is no variable). */
function variableSchema(name: string): Readonly<Record<string, unknown>> | undefined {
  const props: Readonly<Record<string, Readonly<Record<string, unknown>>>> = ENV_SCHEMAS.all.properties;
  return props[name];
}

export function isSecretVariable(name: string): boolean {
  return variableSchema(name)?.['x-secret'] === true;
}
