// From the checked environment to the configuration the services read: units converted, names a
// program would use. Every default is the schema's (applied before this runs), so nothing here
// repeats one; the RelayConfig type is what this returns.

import { hostname } from 'node:os';
import { parseDuration, parseSize } from '../units.js';
import { parseAllowedHosts } from './admin-hosts.js';
import { parseAdminTokens } from './admin-tokens.js';
import type { MetaShape } from '../../../schemas/meta.js';
import type { Env, ServiceKind } from './schema.js';
import { regionSettings } from './region-env.js';
import { tracingSettings } from './tracing-env.js';

// Checked already: every duration and size here matched its pattern and range.
const ms = (v: string): number => parseDuration(v) ?? 0;
const bytes = (v: string): number => parseSize(v) ?? 0;
const list = (v: string): string[] => v.split(',').map((s) => s.trim()).filter((s) => s !== '');

/** How to reach NATS: only what was given (an empty variable is no credential). */
interface NatsSettings {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
  credsFile?: string;
  nkeySeed?: string;
  /** Present when any NATS_TLS_* is set: the connection is then TLS only. */
  tls?: NatsTls;
}

export interface NatsTls {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  serverName?: string;
}

function natsTls(env: Env): NatsTls | undefined {
  const tls: NatsTls = {};
  if (env.NATS_TLS_CA !== '') tls.caFile = env.NATS_TLS_CA;
  if (env.NATS_TLS_CERT !== '') tls.certFile = env.NATS_TLS_CERT;
  if (env.NATS_TLS_KEY !== '') tls.keyFile = env.NATS_TLS_KEY;
  if (env.NATS_TLS_SERVER_NAME !== '') tls.serverName = env.NATS_TLS_SERVER_NAME;
  return Object.keys(tls).length > 0 ? tls : undefined;
}

function natsSettings(env: Env): NatsSettings {
  const nats: NatsSettings = { servers: list(env.NATS_URL) };
  if (env.NATS_USER !== '') nats.user = env.NATS_USER;
  if (env.NATS_PASSWORD !== '') nats.pass = env.NATS_PASSWORD;
  if (env.NATS_TOKEN !== '') nats.token = env.NATS_TOKEN;
  if (env.NATS_CREDS_FILE !== '') nats.credsFile = env.NATS_CREDS_FILE;
  if (env.NATS_NKEY_SEED !== '') nats.nkeySeed = env.NATS_NKEY_SEED;
  const tls = natsTls(env);
  if (tls !== undefined) nats.tls = tls;
  return nats;
}

// The return type is RelayConfig: derived from this mapping, which is typed by the schema.
export function buildConfig(service: ServiceKind, env: Env, explicit: ReadonlySet<string>) {
  return {
    service,
    /** The variables as read (defaults applied), for `relay config`. */
    env,
    /** The variables the environment set (not defaulted): only these are compared with what NATS holds. */
    explicit,
    nodeEnv: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    nodeId: env.RELAY_NODE_ID !== '' ? env.RELAY_NODE_ID : `${hostname().replace(/[^A-Za-z0-9_-]/g, '-')}-${process.pid}`,
    logLevel: env.LOG_LEVEL,
    logPretty: env.LOG_PRETTY === 'true' || (env.LOG_PRETTY === 'auto' && process.stdout.isTTY === true),
    nats: natsSettings(env),
    /** Checked already; null: the mesh has no regions. */
    regions: regionSettings(env),
    profile: {
      /** An http(s) URL, or "offline" (development only). */
      url: env.PROFILE_API_URL,
      timeoutMs: ms(env.PROFILE_API_TIMEOUT),
      cacheTtlMs: ms(env.PROFILE_CACHE_TTL),
      negativeCacheTtlMs: ms(env.PROFILE_NEGATIVE_CACHE_TTL),
      concurrency: env.PROFILE_API_CONCURRENCY,
      maxQueue: env.PROFILE_API_MAX_QUEUE,
      perAddress: env.PROFILE_API_PER_ADDRESS,
      ratePerAddress: env.PROFILE_API_RATE_PER_ADDRESS,
      rateBurst: env.PROFILE_API_RATE_BURST,
      ipv6Prefix: env.PROFILE_API_IPV6_PREFIX,
    },
    /** Checked already: each an IP, a CIDR range or a proxy-addr range name. */
    trustedProxies: list(env.TRUSTED_PROXIES),
    clientHeaderPrefixes: list(env.CLIENT_HEADER_PREFIXES),
    stream: {
      maxAgeMs: ms(env.STREAM_MAX_AGE),
      maxBytes: bytes(env.STREAM_MAX_BYTES),
      replicas: env.STREAM_REPLICAS,
      storage: env.STREAM_STORAGE,
      duplicateWindowMs: ms(env.STREAM_DUPLICATE_WINDOW),
      maxMsgsPerChannel: env.STREAM_MAX_MSGS_PER_CHANNEL,
    },
    auditMaxAgeMs: ms(env.AUDIT_MAX_AGE),
    idempotencyMaxBytes: bytes(env.IDEMPOTENCY_MAX_BYTES),
    kvReplicas: env.KV_REPLICAS,
    claimTtlMs: ms(env.CLAIM_TTL),
    shutdownTimeoutMs: ms(env.SHUTDOWN_TIMEOUT),
    bodyTimeoutMs: ms(env.BODY_TIMEOUT),
    /** The client port's, per client address (trusted proxies not counted); 0: not capped. */
    connectionsPerAddress: env.MAX_CONNECTIONS_PER_ADDRESS,
    ingress: {
      bodyLimit: bytes(env.BODY_LIMIT),
      batchMax: env.BATCH_MAX_ENTRIES,
      ratePerSecond: env.RATE_LIMIT_PER_SECOND,
      rateBurst: env.RATE_LIMIT_BURST,
      bytesPerSecond: bytes(env.RATE_LIMIT_BYTES_PER_SECOND),
      bytesBurst: bytes(env.RATE_LIMIT_BYTES_BURST),
      entryMaxBytes: bytes(env.ENTRY_MAX_BYTES),
      publishTimeoutMs: ms(env.PUBLISH_TIMEOUT),
    },
    gateway: {
      keepaliveMs: ms(env.KEEPALIVE_INTERVAL),
      queueMaxBytes: bytes(env.STREAM_QUEUE_MAX_BYTES),
      resumeWindowBytes: bytes(env.RESUME_WINDOW_BYTES),
      metaShape: metaShape(env.META_AUTHORITATIVE_SENDER),
      nodeTimeoutMs: ms(env.NODE_TIMEOUT),
      retryMinMs: ms(env.RETRY_MIN),
      retryMaxMs: ms(env.RETRY_MAX),
      maxStreamsPerAccount: env.MAX_STREAMS_PER_ACCOUNT,
      maxStreamsPerKey: env.MAX_STREAMS_PER_KEY,
      openRate: env.STREAM_OPEN_RATE,
      openBurst: env.STREAM_OPEN_BURST,
      compactAfterOpens: env.HEAP_COMPACTION_AFTER_OPENS,
    },
    admin: {
      host: env.ADMIN_HOST,
      port: env.ADMIN_PORT,
      /** Every address together; and each address, unless it is a trusted proxy (0: not capped). */
      maxConnections: env.ADMIN_MAX_CONNECTIONS,
      maxConnectionsPerAddress: env.ADMIN_MAX_CONNECTIONS_PER_ADDRESS,
      /** Checked already; the Host values (host, and port when one was given) answered to. */
      allowedHosts: parseAllowedHosts(env.ADMIN_HOST, env.ADMIN_ALLOWED_HOSTS).hosts,
      /** Checked already (length, names); empty only where no admin service runs. */
      tokens: parseAdminTokens(env.ADMIN_TOKEN, env.ADMIN_TOKENS).tokens,
    },
    devNats: env.DEV_NATS,
    tracing: tracingSettings(env, service),
  };
}

export type RelayConfig = ReturnType<typeof buildConfig>;

function metaShape(setting: 'true' | 'false'): MetaShape {
  return setting === 'true' ? 'spec+sender' : 'spec';
}
