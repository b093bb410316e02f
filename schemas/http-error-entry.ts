// The shape of one entry of the error catalogue (schemas/http-errors.ts), and the advice sentences
// several entries share. Its own file so the catalogue's parts (final refusals, throttles, trouble)
// can each be written in theirs.

import type { ErrorExtraMember } from './http-errors.js';

/** The requests that can get a code: GET (opening the stream) and POST. Neither: another path. */
export type StreamOrPost = 'GET' | 'POST';

export interface HttpErrorEntry {
  status: number;
  on: readonly StreamOrPost[];
  /** When the relay answers it. */
  when: string;
  /** What a client does about it. */
  action: string;
  /** The answer carries Retry-After (seconds). */
  retryAfter?: boolean;
  /** The body carries `details` (entry index, JSON path, reason). */
  details?: boolean;
  /** Top-level members of the body besides error, message and details (see ERROR_EXTRA_MEMBERS). */
  extra?: readonly ErrorExtraMember[];
}

export const FIX = 'A final refusal: fix the request; resending it unchanged gets the same answer.';
export const STOP_KEY = 'Final: stop (no retry, no reconnect) and tell the user the client build needs a new key; never a ban.';
export const WAIT = 'Wait Retry-After seconds, then retry; a POST resends the same body with the same Idempotency-Key.';
