// Every refusal of the admin service is an AdminError: a stable code from schemas/admin-api.ts,
// which carries its status (and Retry-After), and a sentence. The app's error handler turns anything
// else into one.

import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { ClosedConnectionError, ConnectionError, DrainingConnectionError, NoRespondersError, RequestError, TimeoutError } from '@nats-io/nats-core';
import { ADMIN_ERRORS, type AdminErrorCode } from '../../schemas/admin-api.js';
import { isRelayError } from '../core/errors.js';
import { LogStalledError } from '../core/log-reader.js';

export class AdminError extends Error {
  readonly code: AdminErrorCode;
  readonly status: number;
  /** Seconds, sent as Retry-After. */
  readonly retryAfter: number | undefined;

  constructor(code: AdminErrorCode, message: string) {
    super(message);
    this.name = 'AdminError';
    this.code = code;
    const entry: { status: number; retryAfter?: number } = ADMIN_ERRORS[code];
    this.status = entry.status;
    this.retryAfter = entry.retryAfter;
  }
}

function isAdminCode(code: string): code is AdminErrorCode {
  return Object.hasOwn(ADMIN_ERRORS, code);
}

const NATS_FAULTS = [ClosedConnectionError, ConnectionError, DrainingConnectionError, NoRespondersError, RequestError, TimeoutError, JetStreamError, JetStreamApiError];

/** What an error thrown inside a route means to the operator. */
export function asAdminError(e: unknown): AdminError {
  if (e instanceof AdminError) return e;
  // The stores' own refusals (unknown scope, no such key) keep their code and sentence.
  if (isRelayError(e) && isAdminCode(e.code)) return new AdminError(e.code, e.message);
  // The framework's own refusals (bad JSON, a body too large or not JSON, a path the static files
  // refuse) are the caller's mistake: answered with their own status, never as our fault.
  const status = clientErrorStatus(e);
  if (status !== null) return frameworkRefusal(status, e instanceof Error ? e.message : 'unreadable');
  // A read of the log that stopped making progress (a node failed under it): retry.
  if (e instanceof LogStalledError) return new AdminError('unavailable', 'Reading the log stalled (a NATS node may have failed under it); retry shortly.');
  // NATS down, reconnecting or refusing: the operator retries, it is no bug of ours.
  if (NATS_FAULTS.some((c) => e instanceof c)) return new AdminError('unavailable', 'NATS cannot be reached or did not answer right now; retry shortly.');
  return new AdminError('internal_error', 'The admin service failed on this request; the log says why.');
}

function clientErrorStatus(e: unknown): number | null {
  if (typeof e !== 'object' || e === null) return null;
  if ('validation' in e && e.validation !== undefined) return 400;
  const status = 'statusCode' in e ? e.statusCode : 'status' in e ? e.status : undefined;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

function frameworkRefusal(status: number, message: string): AdminError {
  switch (status) {
    case 403:
      return new AdminError('forbidden', 'Nothing is served at that path.');
    case 404:
      return new AdminError('not_found', 'Nothing is served at that path.');
    case 413:
      return new AdminError('payload_too_large', 'The request body is larger than the admin API reads.');
    case 415:
      return new AdminError('unsupported_media_type', 'The admin API reads only application/json bodies.');
    default:
      return new AdminError('bad_request', `The request is malformed: ${message}.`);
  }
}
