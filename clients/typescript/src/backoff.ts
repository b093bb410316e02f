// Reconnect and resend delays: exponential back-off with jitter, floored and capped. Every delay the
// relay advises (`retry:`, a close event's retryAfterMs, Retry-After) passes through `advice`: a relay
// that is broken or hostile can lengthen a wait up to the cap, never shorten it below the base (a
// `retry: 0` or retryAfterMs 0 made a reconnect storm), nor push a timer past the cap (Node fires a
// timer beyond 2^31-1 ms after 1 ms).

import { STREAM_TIMINGS } from './generated/timings.js';

export interface BackoffOptions {
  /** Shortest wait (ms), at least MIN_BASE_MS; the relay's `retry:` raises it (never lowers it). Default 1000. */
  baseMs?: number;
  /** Longest wait (ms), at most MAX_DELAY_MS; the relay's advice is cut to it. Default 30000. */
  capMs?: number;
  /** Source of randomness in [0, 1); tests pin it. Default Math.random. */
  random?: () => number;
}

/** The relay's own figures (schemas/stream-timings.ts): its floor of every advised wait, and the cap. */
export const DEFAULT_BACKOFF = { baseMs: STREAM_TIMINGS.minRetryMs, capMs: STREAM_TIMINGS.backoffCapMs } as const;
/** The smallest base a program may set: whatever it or the relay says, no wait is shorter. */
export const MIN_BASE_MS = 50;
/** The longest timer the library sets (a cap, a watchdog): one hour, far below Node's 2^31-1 ms. */
export const MAX_DELAY_MS = 3_600_000;

export class Backoff {
  readonly baseMs: number;
  readonly capMs: number;
  private readonly random: () => number;
  private failures = 0;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? DEFAULT_BACKOFF.baseMs;
    this.capMs = options.capMs ?? DEFAULT_BACKOFF.capMs;
    this.random = options.random ?? Math.random;
  }

  /** Consecutive failures counted so far. */
  get attempts(): number {
    return this.failures;
  }

  /**
   * A delay the relay advised, made safe: a finite number, held within [base, cap]; anything else
   * (absent, NaN, a string in a close event) is undefined, and the back-off decides alone.
   */
  advice(ms: unknown): number | undefined {
    if (typeof ms !== 'number' || !Number.isFinite(ms)) return undefined;
    return Math.min(this.capMs, Math.max(this.baseMs, Math.round(ms)));
  }

  /**
   * The wait before the next attempt, counting one more failure: with window = min(cap, base x
   * 2^(failures+1)), a random time in [max(base, window/2), window) ("equal jitter": spread, yet never
   * below the base, so even an unlucky draw is no tight loop), and never less than the relay's
   * `advisedMs` (checked by `advice`). `baseMs` is the relay's `retry:`, itself checked by `advice`.
   */
  next(advisedMs: unknown = undefined, baseMs: number = this.baseMs): number {
    const base = this.advice(baseMs) ?? this.baseMs;
    const window = Math.min(this.capMs, base * 2 ** Math.min(this.failures + 1, 30));
    const low = Math.max(base, window / 2);
    this.failures++;
    return Math.max(this.advice(advisedMs) ?? 0, Math.floor(low + this.random() * (window - low)));
  }

  reset(): void {
    this.failures = 0;
  }
}
