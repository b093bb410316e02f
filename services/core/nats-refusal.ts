// Why a first connection to NATS failed, told as one sentence naming the setting to change. Only a
// server that is not there yet (refused, unreachable) is worth waiting for at start; a certificate,
// a TLS mismatch or a refused credential will not mend itself, so start-up stops with the sentence.

import { AuthorizationError, PermissionViolationError, TimeoutError, UserAuthenticationExpiredError } from '@nats-io/nats-core';
import type { NatsTls } from './config/build.js';

/** A NATS setting does not fit the servers: start-up stops with this sentence. */
export class NatsSetupError extends Error {
  readonly code = 'nats_setup';
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'NatsSetupError';
  }
}

export type FirstConnectFailure = { kind: 'wait' } | { kind: 'unanswered' } | { kind: 'setup'; error: NatsSetupError };

/** Network errors of a server that is down or still starting. */
const NOT_THERE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

function codeOf(e: unknown): string {
  for (let c: unknown = e; c instanceof Error; c = c.cause) {
    const code = (c as Error & { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return '';
}

/** Sorts a failed first connection to `servers` (shown without credentials). */
export function firstConnectFailure(e: unknown, tls: NatsTls | undefined, servers: string): FirstConnectFailure {
  const code = codeOf(e);
  const message = e instanceof Error ? e.message : String(e);
  const setup = (sentence: string): FirstConnectFailure => ({ kind: 'setup', error: new NatsSetupError(sentence, e) });
  if (NOT_THERE.has(code) || message === 'connection refused') return { kind: 'wait' };
  // The server took the connection and never finished the handshake: typically a server that wants
  // a client certificate this process did not send (it closes the TLS session without a word).
  if (e instanceof TimeoutError) return { kind: 'unanswered' };
  if (message === "server does not support 'tls'") {
    return setup(`NATS_TLS_CA (or another NATS_TLS_* setting) asks for TLS, but the NATS server at ${servers} offers only plain text: enable tls {} in its configuration or unset the NATS_TLS_* settings.`);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return setup(`The NATS server's certificate at ${servers} does not carry the name connected to (${message}): set NATS_TLS_SERVER_NAME to a name the certificate carries.`);
  }
  if (/CERT|SIGNATURE|ISSUER/.test(code)) {
    if (tls?.caFile === undefined) {
      return setup(`The NATS server at ${servers} requires TLS with a certificate this process cannot verify (${message}): set NATS_TLS_CA to the CA certificate that signed it.`);
    }
    return setup(`The NATS server's certificate at ${servers} is not signed by NATS_TLS_CA (${tls.caFile}): ${message}.`);
  }
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code.startsWith('ERR_OSSL')) {
    return setup(`TLS with the NATS server at ${servers} failed (${message}): check NATS_TLS_CERT and NATS_TLS_KEY (a pair, PEM files) and NATS_TLS_CA.`);
  }
  if (e instanceof AuthorizationError || e instanceof UserAuthenticationExpiredError) {
    return setup(`The NATS server at ${servers} refused this process's credentials (${message}): check NATS_USER and NATS_PASSWORD, NATS_TOKEN, NATS_NKEY_SEED or NATS_CREDS_FILE.`);
  }
  return setup(`Cannot connect to NATS at ${servers} (check NATS_URL and the NATS_* settings): ${message}.`);
}

/** The sentence when the server would not answer the handshake, after a few tries. */
export function unansweredSentence(tls: NatsTls | undefined, servers: string): string {
  return tls?.certFile === undefined
    ? `The NATS server at ${servers} took the connection but never finished the handshake; if it requires client certificates, set NATS_TLS_CERT and NATS_TLS_KEY.`
    : `The NATS server at ${servers} took the connection but never finished the handshake; check that it trusts the CA of NATS_TLS_CERT.`;
}

/** The permissions refusal behind `e` (the client wraps one in a RequestError), if any. */
export function permissionViolationOf(e: unknown): PermissionViolationError | null {
  for (let c: unknown = e; c instanceof Error; c = c.cause) if (c instanceof PermissionViolationError) return c;
  return null;
}

/** A JetStream request at start refused by the server's permissions: which role lacks what. */
export function permissionSentence(e: PermissionViolationError): string {
  return `The NATS user may not ${e.operation === 'publish' ? 'publish to' : 'subscribe to'} ${e.subject}, which this service needs at start: give its user the permissions of its role (infra/nats/permissions.conf, docs/OPERATIONS.md "Permissions per role").`;
}
