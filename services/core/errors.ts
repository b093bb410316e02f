// Every refusal the relay makes is a RelayError: a stable code, an HTTP status and a human sentence.
// The HTTP layer turns it into {"error", "message", "details"?}; nothing else builds error bodies.

export const ErrorCode = {
  BadRequest: 'bad_request',
  InvalidJson: 'invalid_json',
  InvalidPayload: 'invalid_payload',
  UnknownType: 'unknown_type',
  InvalidChannel: 'invalid_channel',
  MissingChannel: 'missing_channel',
  SenderRequired: 'sender_required',
  InvalidLastEventId: 'invalid_last_event_id',
  ConflictingCredentials: 'conflicting_credentials',
  Unauthorized: 'unauthorized',
  InvalidSession: 'invalid_session',
  Banned: 'banned',
  KeyExpired: 'key_expired',
  KeyRevoked: 'key_revoked',
  MissingScope: 'missing_scope',
  NotFound: 'not_found',
  MethodNotAllowed: 'method_not_allowed',
  NotAcceptable: 'not_acceptable',
  PayloadTooLarge: 'payload_too_large',
  BatchTooLarge: 'batch_too_large',
  EntryTooLarge: 'entry_too_large',
  RequestTimeout: 'request_timeout',
  IdempotencyKeyReused: 'idempotency_key_reused',
  TooManyStreams: 'too_many_streams',
  ProfileBusy: 'profile_api_busy',
  UnsupportedMediaType: 'unsupported_media_type',
  RateLimited: 'rate_limited',
  ProfileUnavailable: 'profile_api_unavailable',
  PublishFailed: 'publish_failed',
  Unavailable: 'unavailable',
  Draining: 'draining',
  Internal: 'internal_error',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorDetail {
  /** Index of the batch entry the problem is in (0 for a single payload). */
  entry?: number;
  /** JSON pointer into that entry. */
  path?: string;
  reason: string;
}

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

  constructor(status: number, code: ErrorCode, message: string, options: RelayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RelayError';
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
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
