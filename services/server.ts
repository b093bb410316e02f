// Composition: one process serving the ingress, the gateway, or both (the all-in-one development
// mode) on one port. Ingress and gateway never import each other; only this module knows both.

import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ALL_IN_ONE_HAS_NO_REGIONS, ConfigError, loadConfig, type RelayConfig, type ServiceKind } from './core/config.js';
import { RelayError } from './core/errors.js';
import { CLIENT_PATHS, createHttpApp, sendError, type ClientRoute } from './core/http.js';
import type { Logger } from './core/logger.js';
import { NodeHeartbeat } from './core/node-heartbeat.js';
import { coreLogger, startCore, stopCore, type CoreOptions, type RelayCore } from './core/runtime.js';
import { startPatiently } from './core/start-patience.js';
import { natsChecks, Readiness } from './core/readiness.js';
import { Gateway } from './gateway/gateway.js';
import { closeEveryConnection } from './gateway/stream/bare-socket.js';
import { Ingress } from './ingress/ingress.js';

/** How often readiness is evaluated besides /readyz (for relay_ready and the heartbeat). */
const READINESS_INTERVAL_MS = 5000;

export interface RelayServer {
  config: RelayConfig;
  core: RelayCore;
  logger: Logger;
  app: FastifyInstance;
  ingress: Ingress | null;
  gateway: Gateway | null;
  /** Every route the client port answers: fastify's, and the streams served before fastify. */
  routes: ClientRoute[];
  /** http://host:port the server listens on. */
  url: string;
  port: number;
  /** Graceful: drain streams and in-flight POSTs, close the listener, drain NATS. */
  close(): Promise<void>;
}

export interface StartOptions extends CoreOptions {
  /** The admin service has its own composition (services/admin/admin-server.ts). */
  service: Exclude<ServiceKind, 'admin'>;
  env?: NodeJS.ProcessEnv;
  config?: RelayConfig;
}

export async function startRelayServer(options: StartOptions): Promise<RelayServer> {
  const config = options.config ?? loadConfig(options.service, options.env);
  if (config.regions !== null && config.service === 'all') throw new ConfigError([ALL_IN_ONE_HAS_NO_REGIONS]);
  const logger = coreLogger(config, options);
  return startPatiently(() => startOnce(config, { ...options, logger }), logger);
}

/** One try: what it opened is closed again if it fails (startPatiently may try again). */
async function startOnce(config: RelayConfig, options: StartOptions): Promise<RelayServer> {
  const core = await startCore(config, options);
  const undo: Array<() => unknown> = [];
  try {
    return await serve(config, core, undo);
  } catch (e) {
    for (const step of undo.reverse()) await Promise.resolve().then(step).catch(() => undefined);
    await stopCore(core).catch(() => undefined);
    await core.nats.nc.close().catch(() => undefined);
    throw e;
  }
}

async function serve(config: RelayConfig, core: RelayCore, undo: Array<() => unknown>): Promise<RelayServer> {
  const withIngress = config.service !== 'gateway';
  const withGateway = config.service !== 'ingress';
  const ingress = withIngress ? new Ingress(core) : null;
  const gateway = withGateway ? new Gateway(core) : null;

  const draining = (): boolean => (ingress?.isDraining ?? false) || (gateway?.isDraining ?? false);
  const readiness = new Readiness([
    ...natsChecks(core.nats.jsm, () => core.natsConnected(), { ingress: withIngress, gateway: withGateway }, config.regions?.here ?? null),
    { name: 'draining', check: () => !draining(), local: true },
  ]);
  const routes: ClientRoute[] = withGateway ? CLIENT_PATHS.map((url) => ({ method: 'GET', url })) : [];
  const app = createHttpApp({
    routes,
    ...(gateway !== null ? { streamHandler: (req, res) => gateway.handle(req, res) } : {}),
    logger: core.logger,
    metrics: core.metrics,
    bodyLimit: config.ingress.bodyLimit,
    bodyTimeoutMs: config.bodyTimeoutMs,
    connections: { perAddress: config.connectionsPerAddress, ipv6Prefix: config.profile.ipv6Prefix, exempt: core.trustProxy },
    readiness,
  });
  ingress?.register(app);
  // A proxy that sends a verb to the wrong service gets a sentence saying so, not a bare 404.
  for (const url of CLIENT_PATHS) {
    if (!withGateway) {
      app.get(url, (_req, reply) => sendError(reply, misrouted('GET', 'gateway')));
    }
    if (!withIngress) {
      app.post(url, (_req, reply) => sendError(reply, misrouted('POST', 'ingress')));
    }
  }
  const { metrics } = core;
  // Between probes the gauge and the heartbeat follow NATS on their own.
  await readiness.evaluate();
  readiness.watch(READINESS_INTERVAL_MS);
  undo.push(() => readiness.stop(), () => ingress?.stop(), () => gateway?.stop(), () => app.close());
  metrics.observeReadiness(config.service, () => readiness.ready && !draining());
  const heartbeat = new NodeHeartbeat({
    kv: core.nats.buckets.nodes,
    nodeId: config.nodeId,
    role: config.service,
    beatMs: Math.round(config.gateway.nodeTimeoutMs / 3),
    // Two beats missed: long enough, with a beat's own delay, for the gateways to take this one for
    // dead and sweep its claims, which sends no notice (a blackholed link that heals without a reconnect).
    ...(gateway !== null ? { silence: { afterMs: Math.round((config.gateway.nodeTimeoutMs * 2) / 3), then: (gapMs: number) => gateway.afterSilence(`no heartbeat could be written for ${gapMs} ms`) } } : {}),
    status: async () => ({
      ready: readiness.ready && !draining(),
      ...(gateway !== null ? { streams: gateway.streamCount, framesDelivered: total(await metrics.framesDelivered.get()) } : {}),
      ...(ingress !== null ? { entriesPublished: total(await metrics.entriesPublished.get()) } : {}),
    }),
  });
  // The first beat lands before the gateway starts judging liveness, so it sees itself alive.
  await heartbeat.start();
  undo.push(() => heartbeat.stop());
  await gateway?.start();
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address() as AddressInfo;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}`;
  core.logger.info({ url, service: config.service, node: config.nodeId }, 'relay listening');

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const deadline = Date.now() + config.shutdownTimeoutMs;
      const untilDeadline = <T>(work: Promise<T>): Promise<T | void> =>
        Promise.race([work, new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())]);
      await untilDeadline(Promise.all([gateway?.drain(), ingress?.drain()]));
      // Whatever the clients do, no connection outlives the deadline (a body that never finishes,
      // a stream that ignores its close); app.close() would otherwise wait for them.
      if (Date.now() >= deadline) closeEveryConnection(app.server);
      const closed = app.close();
      await untilDeadline(closed);
      closeEveryConnection(app.server);
      await closed;
      await untilDeadline(Promise.resolve(gateway?.stop()));
      await untilDeadline(heartbeat.stop());
      readiness.stop();
      ingress?.stop();
      await untilDeadline(stopCore(core));
      if (!core.nats.nc.isClosed()) await core.nats.nc.close();
    })();
    return closing;
  };
  return { config, core, logger: core.logger, app, ingress, gateway, routes, url, port: address.port, close };
}

function misrouted(verb: string, service: string): RelayError {
  return new RelayError('method_not_allowed', `This process serves only the other verb; ${verb} / belongs to the ${service}.`);
}

function total(metric: { values: { value: number }[] }): number {
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}
