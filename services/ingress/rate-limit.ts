// Per-account token buckets: an account (or a bridge key) may post RATE_LIMIT_PER_SECOND entries per
// second with bursts up to RATE_LIMIT_BURST. In process: each ingress node limits what reaches it.

interface Bucket {
  tokens: number;
  updated: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until the request would be allowed. */
  retryAfter: number;
}

export class RateLimiter {
  private readonly perSecond: number;
  private readonly burst: number;
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweep: NodeJS.Timeout | undefined;

  constructor(perSecond: number, burst: number) {
    this.perSecond = perSecond;
    this.burst = burst;
    // Full buckets carry no information; dropping them keeps memory bounded by active senders.
    this.sweep = perSecond > 0 ? setInterval(() => this.dropFull(), 60_000).unref() : undefined;
  }

  take(key: string, cost: number, now = performance.now()): RateDecision {
    if (this.perSecond === 0) return { allowed: true, retryAfter: 0 };
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updated: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updated) / 1000) * this.perSecond);
    bucket.updated = now;
    this.buckets.set(key, bucket);
    if (cost <= bucket.tokens) {
      bucket.tokens -= cost;
      return { allowed: true, retryAfter: 0 };
    }
    const wait = cost > this.burst ? Infinity : (cost - bucket.tokens) / this.perSecond;
    return { allowed: false, retryAfter: Number.isFinite(wait) ? Math.max(1, Math.ceil(wait)) : 60 };
  }

  private dropFull(now = performance.now()): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.updated) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }

  stop(): void {
    if (this.sweep !== undefined) clearInterval(this.sweep);
  }
}
