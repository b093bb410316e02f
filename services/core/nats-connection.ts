// One connection to NATS from the configuration: servers, credentials (user and password, token,
// nkey seed or .creds file) and TLS (CA, client certificate for mutual TLS, server name). At start
// a service waits for servers that are not up yet, but a setting that does not fit them (a wrong
// CA, TLS against a plain-text server, refused credentials) stops it with one sentence instead.

import { readFileSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { credsAuthenticator, nkeyAuthenticator, type ConnectionOptions, type NatsConnection, type TlsOptions } from '@nats-io/nats-core';
import { maskServerList, maskUrls } from './secret-shapes.js';
import type { Logger } from './logger.js';
import type { RelayConfig } from './config.js';
import { firstConnectFailure, NatsSetupError, unansweredSentence } from './nats-refusal.js';
import { inboxPrefix, type NatsRole } from './subjects.js';

/** Handshakes a server may leave unfinished at start before the setting is blamed (each waits `timeout`). */
const UNANSWERED_TRIES = 2;
const CONNECT_TIMEOUT_MS = 5000;
/** nats-server's default payload limit, until the connection has said its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** The largest message the server takes on this connection (its max_payload). */
export function maxPayload(nc: Pick<NatsConnection, 'info'>): number {
  return nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
}

type NatsSettings = RelayConfig['nats'];

function tlsOptions(tls: NonNullable<NatsSettings['tls']>): TlsOptions {
  // Node's tls.connect takes `servername` (SNI and the name checked); nats.js hands these options on.
  const options: TlsOptions & { servername?: string } = {};
  if (tls.caFile !== undefined) options.caFile = tls.caFile;
  if (tls.certFile !== undefined) options.certFile = tls.certFile;
  if (tls.keyFile !== undefined) options.keyFile = tls.keyFile;
  if (tls.serverName !== undefined) options.servername = tls.serverName;
  return options;
}

function connectOptions(nats: NatsSettings, name: string, inbox: string): ConnectionOptions {
  const authenticator = nats.credsFile
    ? credsAuthenticator(readFileSync(nats.credsFile))
    : nats.nkeySeed
      ? nkeyAuthenticator(new TextEncoder().encode(nats.nkeySeed))
      : undefined;
  return {
    servers: nats.servers,
    name,
    user: nats.user,
    pass: nats.pass,
    token: nats.token,
    authenticator,
    inboxPrefix: inbox,
    ...(nats.tls !== undefined ? { tls: tlsOptions(nats.tls) } : {}),
    // Start-up waits in connectNats, which tells a server not up yet from a setting that is wrong.
    waitOnFirstConnect: false,
    timeout: CONNECT_TIMEOUT_MS,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 250,
    reconnectJitterTLS: 250,
    pingInterval: 10_000,
    // The client otherwise builds an Error (with a stack) up front for every request and publish
    // acknowledgement, in case it fails: about a quarter of the ingress's CPU at high rates.
    noAsyncTraces: true,
  };
}

export interface ConnectNatsOptions {
  /** Give up when no server answers at start-up (the CLI) instead of waiting for one (services). */
  failFast?: boolean;
  /** The NATS role this connection acts as (its replies come under its inbox prefix); the service's own by default. */
  role?: NatsRole;
}

/** The role a process of this kind signs in as, unless told otherwise (the CLI is `cli`). */
export function roleOf(config: Pick<RelayConfig, 'service'>, options: ConnectNatsOptions): NatsRole {
  return options.role ?? config.service;
}

/** Connects; rejects with a NatsSetupError (one sentence naming the setting) when a setting is wrong. */
export async function connectNats(
  config: Pick<RelayConfig, 'nats' | 'nodeId' | 'service'>,
  name: string,
  logger: Logger,
  options: ConnectNatsOptions = {},
): Promise<NatsConnection> {
  const servers = maskServerList(config.nats.servers);
  const opts = connectOptions(config.nats, `${name}:${config.nodeId}`, inboxPrefix(roleOf(config, options)));
  let unanswered = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const nc = await connect(opts);
      watchStatus(nc, logger);
      logger.info({ server: maskUrls(nc.getServer()), tls: config.nats.tls !== undefined }, 'connected to NATS');
      return nc;
    } catch (e) {
      const failure = firstConnectFailure(e, config.nats.tls, servers);
      if (failure.kind === 'setup') throw failure.error;
      if (failure.kind === 'unanswered' && (++unanswered >= UNANSWERED_TRIES || options.failFast === true)) {
        throw new NatsSetupError(unansweredSentence(config.nats.tls, servers), e);
      }
      if (options.failFast === true) throw e;
      if (attempt === 1 || attempt % 30 === 0) logger.warn({ servers, attempt, reason: e instanceof Error ? e.message : String(e) }, 'waiting for NATS');
      await new Promise((r) => setTimeout(r, Math.min(250 * attempt, 2000)));
    }
  }
}

function watchStatus(nc: NatsConnection, logger: Logger): void {
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') logger.warn({ server: maskUrls(s.server) }, 'NATS disconnected');
      else if (s.type === 'reconnect') logger.info({ server: maskUrls(s.server) }, 'NATS reconnected');
      else if (s.type === 'error') logger.warn({ err: s.error }, 'NATS error');
    }
  })();
}
