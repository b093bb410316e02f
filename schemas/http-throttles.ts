// The refusals of a client over its share: the 429s of the error catalogue (schemas/http-errors.ts).
//
// The rule (DESIGN.md section 7, "Throttling is a 4xx"): a refusal is a 429 with Retry-After when
// this client alone passed a limit set per client (per address, account, API key): waiting makes
// room again, whatever everyone else does. Trouble of the relay or of what it depends on (a bound
// shared by every client, the profile API, NATS, a shutdown) is a 5xx: schemas/http-trouble.ts.
// Monitors page on 5xx and libraries take a 503 for the server's fault, so a throttle must not be one.

import { WAIT, type HttpErrorEntry } from './http-error-entry.js';

/** A throttle is a 429 and always says how long to wait. */
type ThrottleEntry = HttpErrorEntry & { status: 429; retryAfter: true };

export const HTTP_THROTTLES = {
  rate_limited: {
    status: 429,
    on: ['POST'],
    when: 'Too many entries or payload bytes per second from one account or bridge key; nothing was published.',
    action: WAIT,
    retryAfter: true,
  },
  too_many_streams: {
    status: 429,
    on: ['GET'],
    when: 'The account (or a bridge key without a session) already holds the most streams allowed across the mesh; `limit` says how many. Reopening on a channel the account already holds is always allowed.',
    action: 'Close a stream you no longer need, or wait Retry-After seconds before trying again.',
    retryAfter: true,
    extra: ['limit'],
  },
  too_many_opens: {
    status: 429,
    on: ['GET'],
    when: 'The account (or a bridge key without a session) opened streams faster than STREAM_OPEN_RATE allows (each open replays what was missed); never a ban.',
    action: 'Wait Retry-After seconds before opening again; reconnect with back-off, not in a loop.',
    retryAfter: true,
  },
  too_many_session_checks: {
    status: 429,
    on: ['GET', 'POST'],
    when: 'Too many new sessions from this client address (IPv6: its PROFILE_API_IPV6_PREFIX block) are being checked: more than PROFILE_API_PER_ADDRESS at once, or more than PROFILE_API_RATE_PER_ADDRESS a second; many players behind one NAT address share it. Never a ban.',
    action: 'Wait Retry-After seconds, then retry (a POST: the same body with the same Idempotency-Key), as after a 503; a session already checked is not counted.',
    retryAfter: true,
  },
} as const satisfies Record<string, ThrottleEntry>;
