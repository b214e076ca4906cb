//! Learns how late a model's entries become visible at the service, relative to their own
//! time (the ingest delay), from what reads return. No read sees a delay directly; each
//! bounds it:
//! - an entry first returned by a read at R, with time t, became visible by then: delay ≤ R − t;
//! - an entry that an earlier read at R1 of its span did not return, and a later read at R2
//!   did, became visible in between: R1 − t < delay ≤ R2 − t.
//!
//! These are interval-censored observations. The estimate is their nonparametric maximum
//! likelihood distribution (Turnbull's self-consistency iteration) over fixed buckets. Where
//! the data cannot tell where mass lies (below the youngest age any read had), the iteration
//! keeps the starting shape, which leans towards short delays: an unproven delay is assumed
//! short, and reads made on that assumption (a shorter `settle`) then show whether it holds.

/** Bucket edges in ms: bucket j holds delays in (EDGES[j], EDGES[j + 1]]; bucket 0 also holds 0. */
export const DELAY_EDGES_MS: readonly number[] = [
  0, 25, 50, 100, 150, 200, 300, 400, 500, 700, 1_000, 1_500, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 10_000, 12_000, 15_000, 20_000, 30_000,
  45_000, 60_000, 120_000, 300_000, 900_000, 3_600_000,
];
const BUCKETS = DELAY_EDGES_MS.length - 1;
/** The last bucket is open: a delay beyond the last edge is counted there. */
const LAST = BUCKETS - 1;
const ITERATIONS = 40;
/** Ratio of the starting weights of neighbouring buckets (short delays first). */
const START_RATIO = 0.5;

/** The first bucket whose upper edge passes `test`; the open last bucket when none does. */
function firstBucketWhere(test: (upperEdge: number) => boolean): number {
  const edge = DELAY_EDGES_MS.findIndex((e, i) => i > 0 && test(e));
  return edge < 0 ? LAST : edge - 1;
}

/** The bucket holding delay `ms` (its upper edge is ≥ ms). */
export function bucketAtOrAbove(ms: number): number {
  return ms > 0 ? firstBucketWhere((e) => e >= ms) : 0;
}

/** The first bucket holding delays above `ms`. */
function bucketAbove(ms: number): number {
  return firstBucketWhere((e) => e > ms);
}

/** Options of {@link DelayEstimator}. */
export interface DelayEstimatorOptions {
  /**
   * Weight of observations kept: beyond it, older ones fade (all weights are scaled down),
   * so the estimate follows a service whose delays change. Default 5,000 entries.
   */
  memory?: number;
}

/**
 * Estimates the distribution of one model's ingest delay from interval-censored
 * observations. Observations are kept as weights per (first bucket, last bucket) pair,
 * so memory is bounded whatever the rate of entries.
 */
export class DelayEstimator {
  private readonly pairs = new Map<number, number>();
  private total = 0;
  private readonly memory: number;
  /** Estimated mass per bucket, recomputed lazily. */
  private mass: Float64Array | undefined;

  constructor(options: DelayEstimatorOptions = {}) {
    this.memory = options.memory ?? 5_000;
  }

  /** Weight of the observations held (after fading). */
  get weight(): number {
    return this.total;
  }

  /**
   * Records `count` entries whose delay is above `lowerMs` (undefined: no read missed them)
   * and at most `upperMs`.
   */
  observe(lowerMs: number | undefined, upperMs: number, count = 1): void {
    if (!(count > 0)) return;
    const hi = bucketAtOrAbove(upperMs);
    const lo = lowerMs === undefined ? 0 : Math.min(bucketAbove(lowerMs), hi);
    const key = lo * 64 + hi;
    this.pairs.set(key, (this.pairs.get(key) ?? 0) + count);
    this.total += count;
    if (this.total > this.memory) {
      const f = this.memory / this.total;
      for (const [k, w] of this.pairs) {
        const v = w * f;
        if (v < 1e-3) this.pairs.delete(k);
        else this.pairs.set(k, v);
      }
      this.total = this.memory;
    }
    this.mass = undefined;
  }

  /**
   * The delay below which a share `p` of entries become visible (ms), interpolated within
   * its bucket; 0 with no observations. The open last bucket answers with its lower edge.
   */
  quantile(p: number): number {
    const mass = this.estimate();
    if (this.total <= 0) return 0;
    let cum = 0;
    for (let j = 0; j < BUCKETS; j++) {
      const m = mass[j]!;
      if (cum + m >= p && m > 0) {
        if (j === LAST) return DELAY_EDGES_MS[j]!;
        const lo = DELAY_EDGES_MS[j]!;
        const hi = DELAY_EDGES_MS[j + 1]!;
        return lo + ((p - cum) / m) * (hi - lo);
      }
      cum += m;
    }
    return DELAY_EDGES_MS[LAST]!;
  }

  /** Estimated share of entries whose delay exceeds `ms` (at bucket resolution). */
  shareAbove(ms: number): number {
    const mass = this.estimate();
    if (this.total <= 0) return 0;
    let s = 0;
    for (let j = bucketAbove(ms); j < BUCKETS; j++) s += mass[j]!;
    return s;
  }

  /** The self-consistency (EM) iteration over the observed bucket ranges. */
  private estimate(): Float64Array {
    if (this.mass) return this.mass;
    const p = new Float64Array(BUCKETS).map((_, j) => START_RATIO ** j);
    normalise(p);
    const ranges = [...this.pairs].map(([key, weight]) => ({ lo: Math.floor(key / 64), hi: key % 64, share: weight / this.total }));
    const cum = new Float64Array(BUCKETS + 1);
    const factor = new Float64Array(BUCKETS + 1);
    for (let it = 0; it < ITERATIONS && ranges.length > 0; it++) {
      for (let j = 0; j < BUCKETS; j++) cum[j + 1] = cum[j]! + p[j]!;
      factor.fill(0);
      for (const { lo, hi, share } of ranges) {
        const s = cum[hi + 1]! - cum[lo]!;
        if (s <= 0) continue;
        factor[lo]! += share / s;
        factor[hi + 1]! -= share / s;
      }
      let f = 0;
      for (let j = 0; j < BUCKETS; j++) {
        f += factor[j]!;
        p[j]! *= f;
      }
      normalise(p);
    }
    this.mass = p;
    return p;
  }
}

function normalise(p: Float64Array): void {
  const s = p.reduce((sum, v) => sum + v, 0);
  if (s > 0) p.forEach((v, j) => (p[j] = v / s));
}
