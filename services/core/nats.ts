// The NATS side of every process: one connection, then the streams and buckets this kind of
// process uses, found as `relay setup` left them (nats-check.ts) and bound without a request.
// Nothing here creates or changes a stream: that takes the operator's credentials (nats-setup.ts).

import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { bindBuckets, type Buckets } from './kv-buckets.js';
import { checkOrCutOff, managerOrCutOff, MetaSilence } from './cut-off-start.js';
import { credentialPlaces, type CredentialPlaces } from './credential-places.js';
import { isMetaUnavailable } from './jetstream-errors.js';
import { isKvStream, kvStream } from './kv-internals.js';
import { checkNatsLayout } from './nats-check.js';
import { natsLayout, plansFor } from './nats-layout.js';
import { durabilityFacts, durabilityStatement, type DurabilityFacts } from './durability.js';
import { connectNats, roleOf, type ConnectNatsOptions } from './nats-connection.js';
import { NatsSetupError, permissionSentence, permissionViolationOf } from './nats-refusal.js';
import type { Logger } from './logger.js';
import type { RelayConfig } from './config.js';
import { claimsBucket, inboxPrefix, writtenLog } from './subjects.js';

/** What start-up found in NATS that the process goes by. */
export interface NatsFindings {
  /** The claims bucket's max age, which gateways renew within (CLAIM_TTL as `relay setup` applied it). */
  claimTtlMs: number | null;
  durability: DurabilityFacts | null;
}

export interface NatsContext {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  buckets: Buckets;
  /** Where the keys and bans are read and this process's bans written. */
  credentials: CredentialPlaces;
  findings: NatsFindings;
  /** Where this connection's replies come (the role's inbox prefix). */
  inboxPrefix: string;
  /** The region this process reads and writes as (null: a mesh without regions); the operator's tools: the home region. */
  region: string | null;
  /**
   * How long JetStream's meta group has been silent, as the start-up watched it (cut-off-start.ts):
   * what runs at start after it (the gateway's claim sweep) goes on from there, not from zero.
   */
  metaSilence: MetaSilence;
}

export { connectNats };

export interface ConnectOptions extends ConnectNatsOptions {
  /**
   * How long a JetStream request (an API call, a KV operation, a publish through the client) may
   * take; the ingress passes its PUBLISH_TIMEOUT. The client's own default otherwise.
   */
  requestTimeoutMs?: number;
}

/** What reaching NATS and checking its streams needs from the configuration. */
export type NatsConfig = Pick<RelayConfig, 'service' | 'explicit' | 'nats' | 'nodeId' | 'stream' | 'regions' | 'kvReplicas' | 'claimTtlMs' | 'auditMaxAgeMs' | 'idempotencyMaxBytes'>;

/** Connects, then checks the streams and buckets this kind of process uses, retrying while JetStream settles. */
export async function openNatsContext(config: NatsConfig, name: string, logger: Logger, options: ConnectOptions = {}): Promise<NatsContext> {
  // One watch of the meta group's silence for the account check and the layout's (cut-off-start.ts).
  const silence = new MetaSilence();
  const { nc, jsm } = await connectWithJetStream(config, name, logger, options, silence);
  try {
    const js = jetstream(nc, options.requestTimeoutMs === undefined ? {} : { timeout: options.requestTimeoutMs });
    // Only the services of a region read and write as it; the operator's tools (the CLI, the admin
    // service) as the home region, wherever they run.
    const serves = config.service === 'ingress' || config.service === 'gateway';
    const region = config.regions === null ? null : serves ? config.regions.here : config.regions.home;
    const credentials = credentialPlaces(config.regions === null || serves ? config.regions : { ...config.regions, here: null });
    const check = checkOrCutOff(() => checkNatsLayout(jsm, plansFor(natsLayout(config), config.service, region), config.explicit), config.regions !== null, logger, silence);
    const findings = await retry(check, logger, options.failFast === true ? 3 : 40);
    if (findings.problems.length > 0) throw new NatsSetupError(findings.problems.join(' '));
    for (const warning of findings.warnings) logger.warn(warning);
    const log = findings.found.get(writtenLog(region).stream);
    const buckets = [...findings.found.entries()].filter(([stream]) => isKvStream(stream)).map(([, info]) => info);
    const durability = log === undefined ? null : durabilityFacts(nc.info?.version ?? 'unknown', log, buckets);
    if (durability !== null) logger.info({ durability }, durabilityStatement(durability));
    const claims = findings.found.get(kvStream(claimsBucket(region)));
    const claimTtlMs = claims === undefined || claims.config.max_age === 0 ? null : Math.round(claims.config.max_age / 1e6);
    return { nc, js, jsm, buckets: await bindBuckets(js, region, credentials.bansWritten), credentials, findings: { claimTtlMs, durability }, inboxPrefix: inboxPrefix(roleOf(config, options)), region, metaSilence: silence };
  } catch (e) {
    await nc.close().catch(() => undefined);
    throw e;
  }
}

/** How often a server without JetStream is left for another before start-up gives up (about a minute). */
const JETSTREAM_TRIES = 40;

/**
 * A connection whose server answers JetStream. A cluster node turns JetStream off when its store
 * fills up, and its clients then get no answer from the JetStream API: connecting again reaches
 * another server (the client picks among those listed at random). The fault campaign saw a gateway
 * restarted while one node's disk was full exit at once ("jetstream is not enabled").
 */
async function connectWithJetStream(config: NatsConfig, name: string, logger: Logger, options: ConnectOptions, silence: MetaSilence): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  for (let attempt = 1; ; attempt++) {
    const nc = await connectNats(config, name, logger, options);
    try {
      return { nc, jsm: await managerOrCutOff(nc, config.regions !== null, logger, silence) };
    } catch (e) {
      const server = nc.getServer();
      await nc.close().catch(() => undefined);
      const off = e instanceof Error && e.name === 'JetStreamNotEnabled';
      if (!off || attempt >= (options.failFast === true ? 3 : JETSTREAM_TRIES)) throw e;
      if (attempt === 1 || attempt % 10 === 0) logger.warn({ server, attempt }, 'JetStream does not answer on the NATS server reached; connecting again');
      await new Promise((r) => setTimeout(r, Math.min(250 * attempt, 2000)));
    }
  }
}

/**
 * Runs `fn` again while JetStream settles (a cluster just started, a leader being elected); a missing
 * permission fails at once. `metaWaitMs`: past `attempts`, tries go on that long from the first while
 * the meta group does not answer (a region's servers back from a restart re-join it).
 */
export async function retry<T>(fn: () => Promise<T>, logger: Logger, attempts = 40, metaWaitMs = 0): Promise<T> {
  const metaUntil = Date.now() + metaWaitMs;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      // Permissions do not change while we wait: say which subject the role lacks, at once.
      const refused = permissionViolationOf(e);
      if (refused !== null) throw new NatsSetupError(permissionSentence(refused), e);
      // A setup problem already said in a sentence, after its own wait (a region's servers offline).
      if (e instanceof NatsSetupError) throw e;
      if (i >= attempts && !(isMetaUnavailable(e) && Date.now() < metaUntil)) throw e;
      if (i === 1 || i % 10 === 0) logger.warn({ err: e, attempt: i }, 'JetStream not ready, retrying');
      await new Promise((r) => setTimeout(r, Math.min(250 * i, 2000)));
    }
  }
}
