import { describe, expect, it } from 'vitest';
import { PollCadence, budgetShortfall } from '../../src/poller/cadence.js';

const S = { intervalMs: 10_000, minIntervalMs: 1_000, ratePerSec: 20, concurrency: 8 };

describe('poll cadence', () => {
  it('polls a model whose last poll returned entries again after min_interval; a quiet one backs off, doubling, to the interval', () => {
    const c = new PollCadence(S);
    c.add('m');
    expect(c.next('m', { appended: true, requests: 1 }, 0)).toBe(1_000);
    expect(c.active).toBe(1);
    expect([1, 2, 3, 4, 5].map(() => c.next('m', { appended: false, requests: 1 }, 0))).toEqual([2_000, 4_000, 8_000, 10_000, 10_000]);
    expect(c.active).toBe(0);
    expect(c.next('m', { appended: true, requests: 1 }, 0)).toBe(1_000);
  });

  it('polls a model asked to hurry at min_interval until the time it was given, then lets it back off', () => {
    const c = new PollCadence(S);
    c.add('m');
    expect(c.hurry('m', 5_000)).toBe(true);
    expect(c.hurry('m', 3_000)).toBe(true); // never shortens
    expect(c.hurried('m', 4_000)).toBe(true);
    expect(c.next('m', { appended: false, requests: 1 }, 4_000)).toBe(1_000);
    expect(c.next('m', { appended: false, requests: 1 }, 5_000)).toBe(2_000);
    expect(c.hurry('unknown', 9_000)).toBe(false);
  });

  it('gives active models what the budget leaves after every model\'s poll per interval', () => {
    // 5 requests/s, of which 4.5 may be planned; 20 quiet models take 2/s; 4 active models sending 2 requests per poll share the other 2.5/s.
    const c = new PollCadence({ ...S, ratePerSec: 5 });
    for (let i = 0; i < 20; i++) c.add(`quiet-${i}`);
    let period = 0;
    for (let round = 0; round < 30; round++) for (let i = 0; i < 4; i++) period = c.next(`busy-${i}`, { appended: true, requests: 2 }, 0);
    expect(c.active).toBe(4);
    expect(period).toBeCloseTo((4 * 2 * 1000) / (4.5 - 20 / 10), 0); // 3.2 s
    // With room to spare, active models go at min_interval.
    const roomy = new PollCadence(S);
    for (let i = 0; i < 4; i++) roomy.next(`busy-${i}`, { appended: true, requests: 2 }, 0);
    expect(roomy.next('busy-0', { appended: true, requests: 2 }, 0)).toBe(1_000);
    // When every model's poll per interval takes the whole budget, active models are polled every interval too.
    const full = new PollCadence({ ...S, ratePerSec: 1 });
    for (let i = 0; i < 20; i++) full.add(`quiet-${i}`);
    expect(full.next('busy', { appended: true, requests: 1 }, 0)).toBe(10_000);
  });

  it('counts the concurrency against the request latency when there is no rate limit', () => {
    const c = new PollCadence({ ...S, ratePerSec: undefined, concurrency: 2 });
    expect(c.capacityPerSec()).toBe(Number.POSITIVE_INFINITY);
    for (let i = 0; i < 100; i++) c.noteLatency(100);
    expect(c.capacityPerSec()).toBeCloseTo(20, 6); // 2 in flight / 0.1 s
  });

  it('says with the numbers when the budget cannot poll every model once per interval', () => {
    const c = new PollCadence(S);
    for (let i = 0; i < 1_000; i++) c.add(`m${i}`);
    const f = c.figures();
    expect(f).toMatchObject({ models: 1_000, requiredPerSec: 100, capacityPerSec: 20, utilization: 5, periodMs: 50_000 });
    const w = budgetShortfall(f, 10_000)!;
    expect(w.message).toMatch(/cannot poll every model once per poll\.interval.*raise poll\.rate_limit/);
    expect(w.fields).toEqual({ models: 1_000, intervalSeconds: 10, requiredPerSecond: 100, budgetPerSecond: 20, utilization: 5, eachModelEverySeconds: 50 });
    const enough = new PollCadence(S);
    for (let i = 0; i < 200; i++) enough.add(`m${i}`);
    expect(enough.figures().utilization).toBe(1);
    expect(budgetShortfall(enough.figures(), 10_000)).toBeUndefined();
    enough.forget('m0');
    expect(enough.figures().models).toBe(199);
  });
});
