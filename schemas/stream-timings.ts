// The stream's timings a client plans for, written once: the AsyncAPI document states them, the
// gateway and the configuration's defaults and checks use them, and the client library should take
// its watchdog and back-off from here too.

/**
 * The shortest wait the relay ever advises before a reconnect: the `retry:` field, a close event's
 * `retryAfterMs`, and (in whole seconds, so 1) every Retry-After. A relay that answers "now" sends
 * every client it closes at once (a drain, a restart) back in the same instant, a flood of its own
 * making; RETRY_MIN may not go below it. Clients may rely on it and should floor what they are told
 * all the same.
 */
export const MIN_RETRY_MS = 1000;

/** A wait as the relay advises it: whole milliseconds, never below MIN_RETRY_MS. */
export function advisedRetryMs(ms: number): number {
  return Math.max(MIN_RETRY_MS, Math.round(ms));
}

export const STREAM_TIMINGS = {
  /** Default interval of the server keepalive pair (KEEPALIVE_INTERVAL). */
  keepaliveMs: 10_000,
  /** The shortest KEEPALIVE_INTERVAL allowed. */
  keepaliveMinMs: 1000,
  /** Silence after which a client should drop the stream and reconnect; KEEPALIVE_INTERVAL stays below it. */
  watchdogMs: 15_000,
  /** The `retry:` the relay sends when a stream opens. */
  openRetryMs: 2000,
  /** The floor of every advised wait (MIN_RETRY_MS). */
  minRetryMs: MIN_RETRY_MS,
  /** Cap of a client's reconnect back-off. */
  backoffCapMs: 30_000,
} as const;
