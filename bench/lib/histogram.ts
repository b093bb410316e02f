// Latency histogram with fixed log-linear buckets (10 µs resolution below 10 ms, 100 µs to 100 ms,
// 1 ms beyond): constant memory however many samples, and mergeable across processes as plain arrays.

const FINE = 1000; // 0..10 ms in 10 µs steps
const MEDIUM = 900; // 10..100 ms in 100 µs steps
const COARSE = 9900; // 100 ms..10 s in 1 ms steps
export const BUCKETS = FINE + MEDIUM + COARSE + 1;

function bucketOf(ms: number): number {
  if (ms < 10) return Math.max(0, Math.floor(ms * 100));
  if (ms < 100) return FINE + Math.floor((ms - 10) * 10);
  if (ms < 10_000) return FINE + MEDIUM + Math.floor(ms - 100);
  return BUCKETS - 1;
}

function valueOf(bucket: number): number {
  if (bucket < FINE) return (bucket + 0.5) / 100;
  if (bucket < FINE + MEDIUM) return 10 + (bucket - FINE + 0.5) / 10;
  if (bucket < BUCKETS - 1) return 100 + (bucket - FINE - MEDIUM + 0.5);
  return 10_000;
}

export class Histogram {
  readonly counts: Uint32Array;
  count = 0;
  max = 0;

  constructor(counts?: ArrayLike<number>) {
    this.counts = new Uint32Array(BUCKETS);
    if (counts !== undefined) {
      this.counts.set(counts);
      for (let i = 0; i < BUCKETS; i++) {
        const c = this.counts[i]!;
        this.count += c;
        if (c > 0) this.max = valueOf(i);
      }
    }
  }

  record(ms: number): void {
    this.counts[bucketOf(ms)]!++;
    this.count++;
    if (ms > this.max) this.max = ms;
  }

  merge(other: Histogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.count += other.count;
    this.max = Math.max(this.max, other.max);
  }

  percentile(p: number): number {
    if (this.count === 0) return NaN;
    const target = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= target) return valueOf(i);
    }
    return this.max;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.max = 0;
  }

  /** Sparse form for IPC: [bucket, count] pairs. */
  toSparse(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]! > 0) out.push([i, this.counts[i]!]);
    return out;
  }

  static fromSparse(pairs: ReadonlyArray<[number, number]>): Histogram {
    const h = new Histogram();
    for (const [i, c] of pairs) {
      h.counts[i] = c;
      h.count += c;
      h.max = Math.max(h.max, valueOf(i));
    }
    return h;
  }
}

export function median(values: readonly number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** Spread of repeated runs: (max - min) / median, as a fraction. */
export function spread(values: readonly number[]): number {
  const v = values.filter((x) => Number.isFinite(x));
  if (v.length < 2) return 0;
  const m = median(v);
  return m === 0 ? 0 : (Math.max(...v) - Math.min(...v)) / m;
}
