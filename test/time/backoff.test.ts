import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffDelay, fullJitterDelay, jittered, sleep, sleepOrAbort } from '../../src/time/backoff.js';

const policy = { baseDelayMs: 100, maxDelayMs: 1000 };

describe('backoff', () => {
  it('doubles the ceiling each retry up to the maximum', () => {
    expect([0, 1, 2, 3, 4, 5, 60, 2000].map((a) => backoffCeiling(a, policy))).toEqual([100, 200, 400, 800, 1000, 1000, 1000, 1000]);
  });

  it('draws a whole number of milliseconds anywhere in [0, ceiling], by one rounding rule for every caller', () => {
    expect(fullJitterDelay(3, policy, () => 0)).toBe(0);
    expect(fullJitterDelay(3, policy, () => 0.5)).toBe(400);
    expect(fullJitterDelay(3, policy, () => 0.999999)).toBe(800);
    expect(fullJitterDelay(3, policy, () => 0.123456)).toBe(99);
    // The loops' two-number form is the same rule.
    for (const r of [0, 0.123456, 0.5, 0.999999]) expect(backoffDelay(3, 100, 1000, () => r)).toBe(fullJitterDelay(3, policy, () => r));
  });

  it('spreads an interval by the given fraction', () => {
    expect(jittered(1000, 0.1, () => 0)).toBe(900);
    expect(jittered(1000, 0.1, () => 1)).toBe(1100);
    expect(jittered(1000, 0.1, () => 0.5)).toBe(1000);
  });
});

describe('sleeps', () => {
  it('sleep resolves early and quietly on abort; sleepOrAbort rejects with the reason', async () => {
    const c = new AbortController();
    const t = performance.now();
    const quiet = sleep(60_000, c.signal);
    const loud = sleepOrAbort(60_000, c.signal);
    c.abort(new Error('stopping'));
    await quiet;
    await expect(loud).rejects.toThrow('stopping');
    expect(performance.now() - t).toBeLessThan(5_000);
  });
});
