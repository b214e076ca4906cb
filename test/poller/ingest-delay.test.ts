import { describe, expect, it } from 'vitest';
import { DELAY_EDGES_MS, DelayEstimator, bucketAtOrAbove } from '../../src/poller/ingest-delay.js';
import { mulberry32 } from '../../src/simulator/prng.js';

/**
 * Synthetic reads of entries whose true delays come from `delay()`: a fresh read at a
 * random age in [settle, settle + period] returns an entry if it is visible by then
 * (delay ≤ age: bounded above by the age), else a re-read at `rereadAt` finds it (delay in
 * (age, rereadAt]).
 */
function feed(est: DelayEstimator, n: number, delay: () => number, settle: number, period: number, rereadAt: number, rnd: () => number): void {
  for (let i = 0; i < n; i++) {
    const d = delay();
    const age = settle + rnd() * period;
    if (d <= age) est.observe(undefined, age);
    else est.observe(age, rereadAt);
  }
}

describe('ingest delay estimator', () => {
  it('maps delays to buckets by their upper edge', () => {
    expect(bucketAtOrAbove(0)).toBe(0);
    expect(bucketAtOrAbove(25)).toBe(0);
    expect(bucketAtOrAbove(26)).toBe(1);
    expect(DELAY_EDGES_MS[bucketAtOrAbove(2_000) + 1]).toBe(2_000);
    expect(DELAY_EDGES_MS[bucketAtOrAbove(2_001) + 1]).toBe(3_000);
    expect(bucketAtOrAbove(1e12)).toBe(DELAY_EDGES_MS.length - 2);
  });

  it('answers 0 before any observation', () => {
    expect(new DelayEstimator().quantile(0.98)).toBe(0);
  });

  it('finds the quantiles of delays bounded tightly on both sides', () => {
    const est = new DelayEstimator();
    est.observe(400, 500, 500); // half in (400, 500]
    est.observe(2_000, 3_000, 500); // half in (2 s, 3 s]
    expect(est.quantile(0.25)).toBeGreaterThan(400);
    expect(est.quantile(0.25)).toBeLessThanOrEqual(500);
    expect(est.quantile(0.75)).toBeGreaterThan(2_000);
    expect(est.quantile(0.75)).toBeLessThanOrEqual(3_000);
    expect(est.shareAbove(1_000)).toBeCloseTo(0.5, 6);
  });

  it('recovers the distribution from fresh reads at varying ages and the re-reads that find what they missed', () => {
    // Delays uniform in [0, 500 ms]; fresh reads at ages in [0, 1 s]; misses found at 3 s.
    const prng = mulberry32(7);
    const rnd = () => prng.next();
    const est = new DelayEstimator({ memory: 50_000 });
    feed(est, 20_000, () => rnd() * 500, 0, 1_000, 3_000, rnd);
    // The true 98th percentile is 490 ms; buckets around it are (400, 500] and (500, 700].
    expect(est.quantile(0.98)).toBeGreaterThan(400);
    expect(est.quantile(0.98)).toBeLessThanOrEqual(560);
    // The true median is 250 ms, in the bucket (200, 300].
    expect(est.quantile(0.5)).toBeGreaterThan(150);
    expect(est.quantile(0.5)).toBeLessThanOrEqual(300);
    expect(est.shareAbove(700)).toBeLessThan(0.001);
  });

  it('places late entries above the age a read missed them at', () => {
    // 90 % visible within 1 s (bounded by fresh reads at 1–2 s), 10 % missed by reads at 5–6 s and found at 30 s.
    const est = new DelayEstimator();
    est.observe(undefined, 1_500, 900);
    est.observe(5_500, 30_000, 100);
    expect(est.shareAbove(5_000)).toBeCloseTo(0.1, 6);
    expect(est.quantile(0.95)).toBeGreaterThan(5_000);
    expect(est.quantile(0.85)).toBeLessThanOrEqual(1_500);
  });

  it('never places an entry above what the read that returned it bounds, and leans short where nothing tells', () => {
    // Only fresh reads at ages 2–3 s, none missed anything: every delay is at most 3 s, and
    // nothing says how much less. The estimate leans short, so that a shorter settle is tried.
    const est = new DelayEstimator();
    for (let age = 2_000; age <= 3_000; age += 10) est.observe(undefined, age, 10);
    expect(est.quantile(0.999)).toBeLessThanOrEqual(3_000);
    expect(est.quantile(0.98)).toBeLessThan(2_000);
    expect(est.shareAbove(3_000)).toBe(0);
  });

  it('forgets old observations beyond its memory, so it follows a service whose delays change', () => {
    const est = new DelayEstimator({ memory: 1_000 });
    est.observe(undefined, 100, 1_000);
    expect(est.quantile(0.5)).toBeLessThanOrEqual(100);
    for (let i = 0; i < 40; i++) est.observe(6_000, 7_000, 100);
    expect(est.weight).toBeCloseTo(1_000, 6);
    expect(est.quantile(0.5)).toBeGreaterThan(6_000);
    expect(est.shareAbove(6_000)).toBeGreaterThan(0.95);
  });
});
