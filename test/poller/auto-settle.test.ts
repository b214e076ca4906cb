import { describe, expect, it } from 'vitest';
import { AUTO_SETTLE, IngestDelays, capMs, type AutoSettleSettings } from '../../src/poller/auto-settle.js';

const BASE: AutoSettleSettings = { settle: 'auto', fallbackSettleMs: 2_000, firstAgeMs: 30_000, lookbackMs: 300_000, minIntervalMs: 1_000 };
const NS = 1_000_000n;

/** Times (ns) of `n` entries spread over [fromMs, toMs). */
function times(fromMs: number, toMs: number, n: number): BigInt64Array {
  const out = new BigInt64Array(n);
  for (let i = 0; i < n; i++) out[i] = BigInt(Math.floor(fromMs + ((toMs - fromMs) * i) / n)) * NS;
  return out;
}

/**
 * A model polled every second for `seconds`, with entries every 10 ms whose delay is
 * `delay(t)`: each fresh read at R returns the entries of [W, R − settle] visible by R; the
 * first re-read (at the age the delays give) finds the rest. Returns the settles and first
 * ages seen, and the share of entries of the second half that the fresh reads missed.
 */
function run(d: IngestDelays, seconds: number, delay: (t: number) => number, t0 = 1_000_000) {
  let w = t0;
  const missed: number[] = [];
  const settles: number[] = [];
  const ages: Array<number | undefined> = [];
  let late = 0;
  let all = 0;
  const half = t0 + (seconds * 1_000) / 2;
  for (let now = t0 + 1_000; now <= t0 + seconds * 1_000; now += 1_000) {
    const to = now - d.settleMs;
    if (to > w) {
      const fresh: number[] = [];
      for (let t = Math.ceil(w / 10) * 10; t <= to; t += 10) {
        const visible = t + delay(t) <= now;
        (visible ? fresh : missed).push(t);
        if (t >= half) {
          all++;
          if (!visible) late++;
        }
      }
      d.observe(BigInt64Array.from(fresh.map((t) => BigInt(t) * NS)), fresh.length, now + 5);
      d.noteRead('fresh', w, to, now);
      w = to + 1;
    }
    // The first re-read, at its age now: what the fresh reads missed and is visible by now.
    const age = d.firstAgeMs ?? 30_000;
    const found = missed.filter((t) => t <= now - age && t + delay(t) <= now);
    if (found.length > 0) {
      for (const t of found) missed.splice(missed.indexOf(t), 1);
      d.observe(BigInt64Array.from(found.map((t) => BigInt(t) * NS)), found.length, now + 5);
    }
    d.update(now);
    settles.push(d.settleMs);
    ages.push(d.firstAgeMs);
  }
  return { settles, ages, missedShare: late / Math.max(1, all) };
}

/** Delays spread evenly over [0, maxMs), in no order with time. */
const spread = (maxMs: number) => (t: number) => ((t / 10) * 7919) % maxMs;

describe('settle: auto', () => {
  it('a fixed settle stays what it is, whatever is observed', () => {
    const d = new IngestDelays({ ...BASE, settle: 2_000 });
    const { settles, ages } = run(d, 120, () => 5_000);
    expect(new Set(settles)).toEqual(new Set([2_000]));
    expect(new Set(ages)).toEqual(new Set([undefined]));
    expect(d.estimator.weight).toBeGreaterThan(0); // measured all the same (the histogram is fed)
  });

  it('starts from the fallback, never above half the first re-read age', () => {
    expect(new IngestDelays(BASE).settleMs).toBe(2_000);
    expect(new IngestDelays({ ...BASE, firstAgeMs: 3_000 }).settleMs).toBe(1_500);
    expect(capMs(BASE)).toBe(15_000);
    expect(capMs({ firstAgeMs: undefined, lookbackMs: 60_000 })).toBe(30_000);
  });

  it('keeps the fallback until enough entries were seen', () => {
    const d = new IngestDelays(BASE);
    d.observe(times(0, 1_000, AUTO_SETTLE.minWeight - 1), AUTO_SETTLE.minWeight - 1, 10_000);
    expect(d.update(10_000)).toBe(false);
    expect(d.settleMs).toBe(2_000);
  });

  it('comes down to short delays, by at most a quarter per step, so that fresh reads find nearly all, and moves the first re-read early', () => {
    const d = new IngestDelays(BASE);
    const { settles, ages, missedShare } = run(d, 180, spread(500));
    for (let i = 1; i < settles.length; i++) expect(settles[i]!).toBeGreaterThanOrEqual(Math.floor((settles[i - 1]! * AUTO_SETTLE.maxDecrease) / 10) * 10);
    const last = settles.at(-1)!;
    expect(last).toBeLessThan(700);
    expect(missedShare).toBeLessThan(0.03);
    const age = ages.at(-1)!;
    expect(age).toBeLessThan(30_000);
    expect(age).toBeGreaterThanOrEqual(2 * last);
    expect(age).toBeGreaterThanOrEqual(last + 2_000);
  });

  it('climbs to cover delays the fresh reads keep missing, not beyond half the first age', () => {
    const d = new IngestDelays(BASE);
    const { settles, ages, missedShare } = run(d, 240, spread(6_000));
    const last = settles.at(-1)!;
    expect(last).toBeGreaterThan(4_500);
    expect(last).toBeLessThanOrEqual(7_000);
    expect(missedShare).toBeLessThan(0.05);
    expect(ages.at(-1)).toBeGreaterThanOrEqual(last + 2_000);
    const slow = new IngestDelays(BASE);
    const r = run(slow, 400, () => 25_000); // every entry 25 s late: the cap holds
    expect(Math.max(...r.settles)).toBeLessThanOrEqual(15_000);
    expect(r.ages.at(-1)).toBeUndefined(); // no early re-read: half the first age is as far as the settle goes
  });

  it('has no early re-read without a configured age below the lookback', () => {
    const d = new IngestDelays({ ...BASE, firstAgeMs: undefined });
    run(d, 60, spread(500));
    expect(d.firstAgeMs).toBeUndefined();
    expect(d.settleMs).toBeLessThanOrEqual(150_000);
  });

  it('tells for each entry found late how long after its time the read that missed it was', () => {
    const d = new IngestDelays(BASE);
    d.noteRead('fresh', 0, 10_000, 12_000); // before the model's first entry: not logged (nothing to learn yet)
    d.observe(BigInt64Array.of(9_000n * NS), 1, 12_000);
    d.noteRead('fresh', 0, 10_000, 12_000);
    d.noteRead('early', 0, 5_000, 20_000);
    const late: number[] = [];
    // 4 000 was missed by the fresh read at 12 s (8 s after it) and by the early re-read at 20 s (16 s after it).
    d.observe(BigInt64Array.of(4_000n * NS, 8_000n * NS, 50_000n * NS), 3, 60_000, (ms) => late.push(ms));
    expect(late).toEqual([16_000, 4_000]); // 50 000 was never read before: not late
  });
});
