// The NATS side of both services: one connection, the RELAY stream (the event log, RePublishing
// every stored payload to live.channel.*) and the KV buckets every node watches.

import { nanos, type NatsConnection } from '@nats-io/nats-core';
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { ensureAuditStream } from './audit.js';
import { openBuckets, type Buckets } from './kv-buckets.js';
import { connectNats, type ConnectNatsOptions } from './nats-connection.js';
import { NatsSetupError, permissionSentence, permissionViolationOf } from './nats-refusal.js';
import type { Logger } from './logger.js';
import type { RelayConfig } from './config.js';
import { LIVE_PREFIX, STREAM_NAME, STREAM_SUBJECTS } from './subjects.js';

export interface NatsContext {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  buckets: Buckets;
}

export { connectNats };

export interface ConnectOptions extends ConnectNatsOptions {
  /**
   * Bring an existing stream and buckets to this process's configured limits (the services do).
   * Tools (the CLI, scripts) only create what is missing: their environment must not rewrite a
   * running mesh's retention or replicas.
   */
  applyLimits?: boolean;
  /**
   * How long a JetStream request (an API call, a KV operation, a publish through the client) may
   * take; the ingress passes its PUBLISH_TIMEOUT. The client's own default otherwise.
   */
  requestTimeoutMs?: number;
}

/** What reaching NATS and shaping its stream and buckets needs from the configuration. */
export type NatsConfig = Pick<RelayConfig, 'nats' | 'nodeId' | 'stream' | 'kvReplicas' | 'claimTtlMs' | 'auditMaxAgeMs' | 'idempotencyMaxBytes'>;

export function streamConfig(config: Pick<RelayConfig, 'stream'>): Partial<StreamConfig> & { name: string } {
  return {
    name: STREAM_NAME,
    description: 'Channel relay event log: every accepted payload, per channel subject.',
    subjects: [STREAM_SUBJECTS],
    retention: RetentionPolicy.Limits,
    storage: config.stream.storage === 'memory' ? StorageType.Memory : StorageType.File,
    num_replicas: config.stream.replicas,
    max_age: nanos(config.stream.maxAgeMs),
    max_bytes: config.stream.maxBytes,
    // Each channel's share of the log: a flood in one channel ages out only that channel's history.
    max_msgs_per_subject: config.stream.maxMsgsPerChannel === 0 ? -1 : config.stream.maxMsgsPerChannel,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(config.stream.duplicateWindowMs),
    allow_direct: true,
    republish: { src: STREAM_SUBJECTS, dest: LIVE_PREFIX + STREAM_SUBJECTS },
  };
}

/**
 * Creates the stream, or brings an existing one to the configured limits. Changing limits keeps the
 * data; a storage change cannot be applied in place and is reported instead.
 */
export async function ensureStream(jsm: JetStreamManager, config: Pick<RelayConfig, 'stream'>, logger: Logger, applyLimits = true): Promise<void> {
  const wanted = streamConfig(config);
  const existing = await jsm.streams.info(STREAM_NAME).catch((e: unknown) => {
    if (isNotFound(e)) return null;
    throw e;
  });
  if (existing === null) {
    await jsm.streams.add(wanted);
    logger.info({ stream: STREAM_NAME }, 'created the event log stream');
    return;
  }
  if (!applyLimits) return;
  const c = existing.config;
  if (c.storage !== wanted.storage) {
    logger.warn({ stream: STREAM_NAME, has: c.storage, wanted: wanted.storage }, 'STREAM_STORAGE differs from the existing stream; storage cannot change in place, keeping it');
  }
  const changed =
    c.max_age !== wanted.max_age ||
    c.max_bytes !== wanted.max_bytes ||
    c.max_msgs_per_subject !== wanted.max_msgs_per_subject ||
    c.num_replicas !== wanted.num_replicas ||
    c.duplicate_window !== wanted.duplicate_window ||
    c.republish?.dest !== wanted.republish?.dest;
  if (changed) {
    await jsm.streams.update(STREAM_NAME, {
      ...c,
      max_age: wanted.max_age!,
      max_bytes: wanted.max_bytes!,
      max_msgs_per_subject: wanted.max_msgs_per_subject!,
      num_replicas: wanted.num_replicas!,
      duplicate_window: wanted.duplicate_window!,
      republish: wanted.republish!,
    });
    logger.info({ stream: STREAM_NAME }, 'applied new event log limits');
  }
}

function isNotFound(e: unknown): boolean {
  return e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound;
}

/** Connect, then make sure the stream and buckets exist, retrying while JetStream settles. */
export async function openNatsContext(
  config: NatsConfig,
  name: string,
  logger: Logger,
  options: ConnectOptions = {},
): Promise<NatsContext> {
  const nc = await connectNats(config, name, logger, options);
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc, options.requestTimeoutMs === undefined ? {} : { timeout: options.requestTimeoutMs });
  const applyLimits = options.applyLimits ?? true;
  const buckets = await retry(async () => {
    await ensureStream(jsm, config, logger, applyLimits);
    await ensureAuditStream(jsm, { maxAgeMs: config.auditMaxAgeMs, replicas: config.stream.replicas }, logger, applyLimits);
    return openBuckets(nc, jsm, config, logger, applyLimits);
  }, logger);
  return { nc, js, jsm, buckets };
}

/** Runs `fn` again while JetStream settles (a cluster just started, a leader being elected); a missing permission fails at once. */
export async function retry<T>(fn: () => Promise<T>, logger: Logger, attempts = 40): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      // Permissions do not change while we wait: say which subject the role lacks, at once.
      const refused = permissionViolationOf(e);
      if (refused !== null) throw new NatsSetupError(permissionSentence(refused), e);
      if (i >= attempts) throw e;
      if (i === 1 || i % 10 === 0) logger.warn({ err: e, attempt: i }, 'JetStream not ready, retrying');
      await new Promise((r) => setTimeout(r, Math.min(250 * i, 2000)));
    }
  }
}
