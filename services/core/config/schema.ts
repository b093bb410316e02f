// The configuration schema: every environment variable of every service, its default (written once),
// its meaning and its unit: those every service reads here, each service's own in <service>-env.ts,
// tracing's in tracing-env.ts. The loader validates and converts from it, `relay config` describes
// it, and scripts/generate-env-examples.ts writes infra/env/*.env.example from it.

import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { AdminEnv } from './admin-env.js';
import { duration, lifetime, secret, size } from './env-annotations.js';
import { GatewayEnv } from './gateway-env.js';
import { IngressEnv } from './ingress-env.js';
import { RegionEnv } from './region-env.js';
import { TracingEnv } from './tracing-env.js';
import type { ServiceKind } from './service-kinds.js';

export type { ServiceKind };

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
  ...RegionEnv,
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
} as const satisfies Record<ServiceKind, TObject>;

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
