// Token buckets by key, in one or more currencies. The ingress limits each account's (or bridge
// key's) entries (RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST) and payload bytes
// (RATE_LIMIT_BYTES_PER_SECOND, RATE_LIMIT_BYTES_BURST): counting entries alone let one account post
// a few huge entries a second and push every other channel's history out of the log. The session
// check limits new profile look-ups per client address, and the gateway stream opens per account.
// A request is let through only when every bucket can pay; a refused one pays nothing. In process:
// each node limits what reaches it.

export interface Rate {
  perSecond: number;
  burst: number;
}

interface Bucket {
  /** Tokens per currency. */
  tokens: number[];
  updated: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until the request would be allowed. */
  retryAfter: number;
  /** Index of the rate that refused (0 entries, 1 bytes), -1 when allowed. */
  refusedBy: number;
}

export class RateLimiter {
  /** Only the rates that are on (perSecond > 0), with their index in the constructor's list. */
  private readonly rates: ReadonlyArray<Rate & { index: number }>;
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweep: NodeJS.Timeout | undefined;

  constructor(rates: readonly Rate[]) {
    this.rates = rates.map((r, index) => ({ ...r, index })).filter((r) => r.perSecond > 0);
    // Full buckets carry no information; dropping them keeps memory bounded by active senders.
    this.sweep = this.rates.length > 0 ? setInterval(() => this.dropFull(), 60_000).unref() : undefined;
  }

  /** `costs[i]` is paid from the bucket of `rates[i]`. */
  take(key: string, costs: readonly number[], now = performance.now()): RateDecision {
    if (this.rates.length === 0) return { allowed: true, retryAfter: 0, refusedBy: -1 };
    const bucket = this.buckets.get(key) ?? { tokens: this.rates.map((r) => r.burst), updated: now };
    const elapsed = (now - bucket.updated) / 1000;
    this.rates.forEach((r, i) => (bucket.tokens[i] = Math.min(r.burst, bucket.tokens[i]! + elapsed * r.perSecond)));
    bucket.updated = now;
    this.buckets.set(key, bucket);
    for (const [i, r] of this.rates.entries()) {
      const cost = costs[r.index] ?? 0;
      if (cost > bucket.tokens[i]!) {
        // A cost above the burst can never be paid: say so with a long wait rather than a retry loop.
        const wait = cost > r.burst ? Infinity : (cost - bucket.tokens[i]!) / r.perSecond;
        return { allowed: false, retryAfter: Number.isFinite(wait) ? Math.max(1, Math.ceil(wait)) : 60, refusedBy: r.index };
      }
    }
    this.rates.forEach((r, i) => (bucket.tokens[i]! -= costs[r.index] ?? 0));
    return { allowed: true, retryAfter: 0, refusedBy: -1 };
  }

  private dropFull(now = performance.now()): void {
    for (const [key, b] of this.buckets) {
      const elapsed = (now - b.updated) / 1000;
      if (this.rates.every((r, i) => b.tokens[i]! + elapsed * r.perSecond >= r.burst)) this.buckets.delete(key);
    }
  }

  stop(): void {
    if (this.sweep !== undefined) clearInterval(this.sweep);
  }
}
