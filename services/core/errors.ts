// Every refusal the relay makes is a RelayError: a stable code and a human sentence. The code carries
// its HTTP status: both come from the one catalogue, schemas/http-errors.ts, which also documents each
// code for clients (OpenAPI, docs). The HTTP layer turns a RelayError into
// {"error", "message", "details"?, ...}; nothing else builds error bodies.

import { MIN_RETRY_MS } from '../../schemas/close.js';
import { HTTP_ERRORS, type ErrorDetail, type HttpErrorCode } from '../../schemas/http-errors.js';

export type ErrorCode = HttpErrorCode;
export type { ErrorDetail };

export interface RelayErrorOptions {
  details?: ErrorDetail[];
  /** Seconds; sent as Retry-After. */
  retryAfter?: number;
  /** Extra top-level members of the body, e.g. `accepted` on a partial publish. */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

export class RelayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly retryAfter: number | undefined;
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: RelayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RelayError';
    this.code = code;
    this.status = HTTP_ERRORS[code].status;
    this.details = options.details;
    // Whole seconds, never below MIN_RETRY_MS: no refusal advises an immediate retry.
    this.retryAfter = options.retryAfter === undefined ? undefined : Math.max(MIN_RETRY_MS / 1000, Math.ceil(options.retryAfter));
    this.extra = options.extra;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    if (this.extra !== undefined) Object.assign(body, this.extra);
    return body;
  }
}

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: ErrorDetail[];
  [extra: string]: unknown;
}

export function isRelayError(e: unknown): e is RelayError {
  return e instanceof RelayError;
}
