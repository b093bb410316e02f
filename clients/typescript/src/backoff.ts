// Reconnect delays: exponential back-off with full jitter (AWS architecture blog, "Exponential
// Backoff And Jitter"), capped. Full jitter spreads the clients of a restarted relay over the whole
// window instead of bringing them back in waves; the cap bounds the wait of a long outage.

export interface BackoffOptions {
  /** First window (ms); the relay's `retry:` replaces it when it sends one. Default 1000. */
  baseMs?: number;
  /** Largest window (ms). Default 30000. */
  capMs?: number;
  /** Source of randomness in [0, 1); tests pin it. Default Math.random. */
  random?: () => number;
}

export const DEFAULT_BACKOFF = { baseMs: 1000, capMs: 30_000 } as const;

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
   * The wait before the next attempt, counting one more failure: a random time in
   * [0, min(cap, base x 2^failures)), never less than `floorMs` (a Retry-After the relay gave).
   */
  next(floorMs = 0, baseMs = this.baseMs): number {
    const window = Math.min(this.capMs, baseMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.max(floorMs, Math.floor(this.random() * window));
  }

  reset(): void {
    this.failures = 0;
  }
}
