// Whether a new profile API look-up may start at all, before it asks the LookupGate for a place.
// The gate bounds how many run at once, not how often: one address cycling fresh junk tokens kept
// its eight places busy and pushed hundreds of look-ups a second upstream, and the real profile API
// limits by the caller's address, which is the relay's: every new player of the mesh was then
// refused. So each client address (its IPv6 block) has a look-up rate (a token bucket,
// PROFILE_API_RATE_PER_ADDRESS and PROFILE_API_RATE_BURST), and a 429 from upstream stops every
// look-up of this process for the time it asked (Retry-After), answering 503 without calling it.
// An address over its rate is throttled (429 too_many_session_checks); upstream's refusal is the
// relay's trouble, not the client's (503). Neither is ever a ban; cached sessions and remembered
// invalid tokens never reach this.

import { fairnessGroup } from './client-address.js';
import { RelayError } from './errors.js';
import { RateLimiter } from './rate-limit.js';

/** Why a look-up was refused here. */
export const BUDGET_REFUSALS = ['address_rate', 'upstream_backoff'] as const;
export type BudgetRefusal = (typeof BUDGET_REFUSALS)[number];

export interface LookupBudgetOptions {
  /** New look-ups per second per address; 0: no limit. */
  ratePerAddress: number;
  rateBurst: number;
  ipv6Prefix: number;
}

/** A 429 without a usable Retry-After: wait this long. */
const DEFAULT_BACKOFF_SECONDS = 30;
/** Longest backoff believed: a wrong header must not stop the relay for hours. */
const MAX_BACKOFF_SECONDS = 600;

export class LookupBudget {
  private readonly options: LookupBudgetOptions;
  private readonly limiter: RateLimiter;
  /** performance.now() until which upstream asked us to wait; 0: not backing off. */
  private backoffUntil = 0;

  constructor(options: LookupBudgetOptions) {
    this.options = options;
    this.limiter = new RateLimiter([{ perSecond: options.ratePerAddress, burst: options.rateBurst }]);
  }

  /** Pays for one new look-up from `address`; null when it may start, else the refusal and why. */
  take(address: string, now = performance.now()): { reason: BudgetRefusal; error: RelayError } | null {
    if (now < this.backoffUntil) {
      const error = new RelayError('profile_api_unavailable', 'The game profile API asked the relay to slow down; try again later.', {
        retryAfter: (this.backoffUntil - now) / 1000,
      });
      return { reason: 'upstream_backoff', error };
    }
    const decision = this.limiter.take(fairnessGroup(address, this.options.ipv6Prefix), [1], now);
    if (decision.allowed) return null;
    const error = new RelayError('too_many_session_checks', 'Too many new sessions from this address are being checked; try again shortly.', {
      retryAfter: decision.retryAfter,
    });
    return { reason: 'address_rate', error };
  }

  /** Upstream answered 429: no look-up until its Retry-After (seconds or an HTTP date) has passed. */
  upstreamLimited(retryAfter: string | undefined, now = performance.now()): number {
    const seconds = Math.min(MAX_BACKOFF_SECONDS, parseRetryAfter(retryAfter) ?? DEFAULT_BACKOFF_SECONDS);
    this.backoffUntil = Math.max(this.backoffUntil, now + seconds * 1000);
    return seconds;
  }

  stop(): void {
    this.limiter.stop();
  }
}

/** Seconds from a Retry-After value (delta-seconds or an HTTP date); null when it is neither. */
export function parseRetryAfter(value: string | undefined): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Math.max(1, Number(text));
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(1, Math.ceil((date - Date.now()) / 1000));
}
