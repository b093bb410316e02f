// The refusals that are the relay's trouble, or that of what it depends on (the profile API, NATS),
// never the client's: the 5xx of the error catalogue (schemas/http-errors.ts). A bound every client
// shares being full is trouble too; a client over its own share is a 429 (schemas/http-throttles.ts).

import { WAIT, type HttpErrorEntry } from './http-error-entry.js';

type TroubleEntry = HttpErrorEntry & { status: 500 | 503 };

export const HTTP_TROUBLE = {
  internal_error: {
    status: 500,
    on: ['GET', 'POST'],
    when: 'A fault inside the relay (a bug); no input is meant to cause it.',
    action: 'Retry with back-off, as for 503; a POST resends the same body with the same Idempotency-Key.',
  },
  profile_api_unavailable: {
    status: 503,
    on: ['GET', 'POST'],
    when: 'The game profile API did not answer (down, failing, timed out): the session could not be checked; never a ban.',
    action: WAIT,
    retryAfter: true,
  },
  profile_api_busy: {
    status: 503,
    on: ['GET', 'POST'],
    when: "The relay's queue of session checks, all clients together (PROFILE_API_MAX_QUEUE), is full (for this request, or for the newest waiter of the address with the most waiting, which a newcomer displaced), or this check waited until too little of PROFILE_API_TIMEOUT was left: the relay cannot check the session now; never a ban. One address over its own share is told 429 `too_many_session_checks` instead.",
    action: WAIT,
    retryAfter: true,
  },
  publish_failed: {
    status: 503,
    on: ['POST'],
    when: 'JetStream failed part-way: `accepted` leading entries are stored; body entry `entry` failed (`unknown` 1: it may or may not be stored, its acknowledgement did not come); nothing after it was sent.',
    action: 'With an Idempotency-Key: wait Retry-After and resend the same body with the same key within STREAM_DUPLICATE_WINDOW (nothing is stored twice). Without one: resend the body entries from `entry` on, under a new request, knowing that entry may then be stored twice when `unknown` is 1.',
    retryAfter: true,
    extra: ['accepted', 'unknown', 'entry'],
  },
  unavailable: {
    status: 503,
    on: ['GET', 'POST'],
    when: 'NATS, the API keys or the Idempotency-Key store cannot be reached right now, or the stream could not be registered.',
    action: WAIT,
    retryAfter: true,
  },
  draining: {
    status: 503,
    on: ['GET', 'POST'],
    when: 'This process is shutting down (a restart or a deploy).',
    action: WAIT,
    retryAfter: true,
  },
} as const satisfies Record<string, TroubleEntry>;
