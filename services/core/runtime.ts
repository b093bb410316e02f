// What both services share at run time: configuration, logger, metrics, the NATS context, the
// mirrored keys and bans, and the authenticator. Built once per process.

import type { IncomingMessage } from 'node:http';
import { Authenticator } from './auth.js';
import { BanStore } from './bans.js';
import { addressReader } from './address-reader.js';
import { compileTrustedProxies, type TrustProxy } from './client-address.js';
import type { RelayConfig } from './config.js';
import { KeyStore } from './keys.js';
import { createLogger, type Logger } from './logger.js';
import { RelayMetrics } from './metrics.js';
import { openNatsContext, type NatsContext } from './nats.js';
import { OfflineProfileResolver } from './offline.js';
import { HttpProfileClient, type ProfileResolver } from './profile.js';
import { startTracing, type Tracing } from './tracing.js';

export interface RelayCore {
  config: RelayConfig;
  logger: Logger;
  metrics: RelayMetrics;
  nats: NatsContext;
  keys: KeyStore;
  bans: BanStore;
  auth: Authenticator;
  /** OpenTelemetry; its tracer is null unless an OTLP endpoint is configured. */
  tracing: Tracing;
  /** The client's address, read the same way by both services (TRUSTED_PROXIES). */
  addressOf: (req: IncomingMessage) => string;
  /** The proxies TRUSTED_PROXIES names: their X-Forwarded-For is believed, their connections are not capped per address. */
  trustProxy: TrustProxy;
  /** True while the NATS connection is up (false between a disconnect and the reconnect). */
  natsConnected(): boolean;
}

export interface CoreOptions {
  /** Tests capture logs here. */
  logDestination?: NodeJS.WritableStream;
  logger?: Logger;
}

/** The process's logger, as configured (or the one a test passes). */
export function coreLogger(config: RelayConfig, options: CoreOptions = {}): Logger {
  return (
    options.logger ??
    createLogger({
      level: config.logLevel,
      pretty: config.logPretty,
      nodeId: config.nodeId,
      service: config.service,
      clientHeaderPrefixes: config.clientHeaderPrefixes,
      ...(options.logDestination !== undefined ? { destination: options.logDestination } : {}),
    })
  );
}

export async function startCore(config: RelayConfig, options: CoreOptions = {}): Promise<RelayCore> {
  const logger = coreLogger(config, options);
  const metrics = new RelayMetrics(config.nodeId);
  // The ingress's publish timeout bounds its JetStream requests; a gateway keeps the client's default.
  const requestTimeoutMs = config.service === 'gateway' ? undefined : config.ingress.publishTimeoutMs;
  const nats = await openNatsContext(config, config.service, logger, requestTimeoutMs === undefined ? {} : { requestTimeoutMs });
  let connected = true;
  metrics.natsConnected.set(1);
  void (async () => {
    for await (const s of nats.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'close') connected = false;
      else if (s.type === 'reconnect') connected = true;
      metrics.natsConnected.set(connected ? 1 : 0);
    }
  })();
  const keys = new KeyStore(nats.js, nats.buckets.keys, logger, nats.credentials.keys);
  const bans = new BanStore(nats.js, nats.buckets.bans, logger, config.service === 'admin' ? null : config.service, nats.credentials);
  try {
    await Promise.all([keys.start(), bans.start()]);
  } catch (e) {
    await Promise.all([keys.stop(), bans.stop()]).catch(() => undefined);
    await nats.nc.close().catch(() => undefined);
    throw e;
  }
  const lookups =
    config.profile.url === 'offline'
      ? null
      : new HttpProfileClient({
          url: config.profile.url,
          timeoutMs: config.profile.timeoutMs,
          cacheTtlMs: config.profile.cacheTtlMs,
          negativeCacheTtlMs: config.profile.negativeCacheTtlMs,
          concurrency: config.profile.concurrency,
          maxQueue: config.profile.maxQueue,
          perAddress: config.profile.perAddress,
          ratePerAddress: config.profile.ratePerAddress,
          rateBurst: config.profile.rateBurst,
          ipv6Prefix: config.profile.ipv6Prefix,
          logger,
          refused: (reason) => metrics.lookupRefusals.inc({ reason }),
          observe: (outcome, seconds) => {
            metrics.profileCalls.inc({ outcome });
            if (outcome !== 'cached') metrics.profileDuration.observe({ outcome }, seconds);
          },
        });
  if (lookups !== null) metrics.observeLookupsWaiting(() => lookups.waiting);
  const profiles: ProfileResolver = lookups ?? new OfflineProfileResolver();
  if (config.profile.url === 'offline') logger.warn('PROFILE_API_URL=offline: anyone can be anyone (Bearer offline:<name>); development only');
  const auth = new Authenticator({
    keys,
    bans,
    profiles,
    clientHeaderPrefixes: config.clientHeaderPrefixes,
    logger,
    observer: { banIssued: () => metrics.bansIssued.inc() },
  });
  const trust = compileTrustedProxies(config.trustedProxies);
  return {
    config,
    logger,
    metrics,
    nats,
    keys,
    bans,
    auth,
    tracing: startTracing(config.tracing, config.nodeId, logger),
    addressOf: addressReader(trust, logger),
    trustProxy: trust,
    natsConnected: () => connected && !nats.nc.isClosed(),
  };
}

export async function stopCore(core: RelayCore): Promise<void> {
  await Promise.all([core.keys.stop(), core.bans.stop(), core.tracing.shutdown()]);
  if (!core.nats.nc.isClosed()) await core.nats.nc.drain().catch(() => undefined);
}
