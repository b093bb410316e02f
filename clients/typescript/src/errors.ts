// One error type for everything the client reports: the relay's refusals (with its stable `error`
// code, HTTP status and details), the reasons the relay gives for ending a stream, and the few
// failures the client finds itself. Programs switch on `code`, never on the sentence.

import type { CloseReasonCode, HttpErrorCode } from './generated/wire.js';

/** Failures the client detects itself (no relay code exists for them). */
export type ClientErrorCode =
  /** Options the relay would refuse or punish (checked before any request is made). */
  | 'misconfigured'
  /** `close()` was called. */
  | 'client_closed'
  /** The request or the stream failed below HTTP (refused connection, reset, DNS). */
  | 'network_error'
  /** Nothing arrived for `watchdogMs` (a half-open connection, a stuck proxy). */
  | 'watchdog_timeout'
  /** The relay ended the stream without saying why (a crash, a proxy cutting it). */
  | 'stream_ended'
  /** An answer that is not the relay's: not an event stream, or a 2xx that is not its JSON. */
  | 'invalid_response'
  /** An HTTP refusal without the relay's JSON body (a proxy's 502, say); `status` has it. */
  | 'http_error'
  /** The program's `token()` threw or returned nothing usable. */
  | 'token_unavailable'
  /** The relay answered with a redirect (3xx): not followed, so the credentials stay on the configured origin. */
  | 'redirect_refused'
  /** An event on the stream passed the 4 MiB bound (retried with back-off). */
  | 'frame_too_large'
  /** The relay closed the stream for a reason not in the close catalogue (a newer relay); `body.reason` has it. */
  | 'unknown_close';

export type ErrorCode = HttpErrorCode | CloseReasonCode | ClientErrorCode;

/** Where in a POST body a validation problem is. */
export interface ErrorDetail {
  /** Index of the batch entry (0 for a single payload). */
  entry?: number;
  /** JSON pointer into that entry. */
  path?: string;
  reason: string;
}

export interface RelayErrorInit {
  status?: number;
  details?: ErrorDetail[];
  retryAfterMs?: number;
  body?: Record<string, unknown>;
  cause?: unknown;
}

export class RelayError extends Error {
  readonly code: ErrorCode;
  /** The HTTP status of a refusal; 0 when there was none (stream closes, network, local checks). */
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  /** The relay's Retry-After (or a close event's retryAfterMs), in ms. */
  readonly retryAfterMs: number | undefined;
  /** The whole refusal body, for members beyond the usual three (`accepted` of publish_failed). */
  readonly body: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, init: RelayErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'RelayError';
    this.code = code;
    this.status = init.status ?? 0;
    this.details = init.details;
    this.retryAfterMs = init.retryAfterMs;
    this.body = init.body;
  }
}

export function isRelayError(e: unknown): e is RelayError {
  return e instanceof RelayError;
}

/** Retry-After in ms: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or bad. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function refusal(status: number, retryAfterHeader: string | null, text: string): RelayError {
  const retryAfter = retryAfterMs(retryAfterHeader);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string') {
    const b = body as Record<string, unknown> & { error: string; message?: unknown; details?: unknown };
    return new RelayError(b.error, typeof b.message === 'string' ? b.message : b.error, {
      status,
      details: Array.isArray(b.details) ? (b.details as ErrorDetail[]) : undefined,
      retryAfterMs: retryAfter,
      body: b,
    });
  }
  return new RelayError('http_error', `HTTP ${status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`, { status, retryAfterMs: retryAfter });
}

/** A failure below HTTP (fetch threw). */
export function networkError(cause: unknown): RelayError {
  const why = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
  return new RelayError('network_error', `cannot reach the relay: ${why}`, { cause });
}

/**
 * Refusals worth asking again: timeouts, rate limits and the relay (or a proxy) being unavailable.
 * Everything else in 4xx is a fact about the request (its key, scope, account, body) that asking again
 * will not change; 401 is handled apart (the session token is refreshed once).
 */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * Whether send() waits and makes a refused POST again (under the same Idempotency-Key): what
 * retryableStatus allows, except 429 `rate_limited`, which is the program's own pace (resending would
 * only add to it; the program decides). Every other 429 is a share the client meets through no
 * excess of its own (its address's session checks, `too_many_session_checks`): waited out like a 503.
 */
export function resendable(e: RelayError): boolean {
  return retryableStatus(e.status) && e.code !== 'rate_limited';
}
