// Every refusal of the admin service is an AdminError: a stable code from schemas/admin-api.ts,
// which carries its status, and a sentence. The app's error handler turns anything else into one.

import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { ClosedConnectionError, ConnectionError, DrainingConnectionError, NoRespondersError, RequestError, TimeoutError } from '@nats-io/nats-core';
import { ADMIN_ERRORS, type AdminErrorCode } from '../../schemas/admin-api.js';
import { isRelayError } from '../core/errors.js';

export class AdminError extends Error {
  readonly code: AdminErrorCode;
  readonly status: number;

  constructor(code: AdminErrorCode, message: string) {
    super(message);
    this.name = 'AdminError';
    this.code = code;
    this.status = ADMIN_ERRORS[code].status;
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
  const fastify = e as { validation?: unknown; statusCode?: number; message?: string };
  if (fastify.validation !== undefined || fastify.statusCode === 400 || fastify.statusCode === 415) {
    return new AdminError('bad_request', `The request is malformed: ${fastify.message ?? 'unreadable'}.`);
  }
  if (fastify.statusCode === 413) return new AdminError('bad_request', 'The request body is too large.');
  // NATS down, reconnecting or refusing: the operator retries, it is no bug of ours.
  if (NATS_FAULTS.some((c) => e instanceof c)) return new AdminError('unavailable', 'NATS cannot be reached or did not answer right now; retry shortly.');
  return new AdminError('internal_error', 'The admin service failed on this request; the log says why.');
}
