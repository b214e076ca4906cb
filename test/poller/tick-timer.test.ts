import { describe, expect, it } from 'vitest';
import { TickTimer, pollGridMs } from '../../src/poller/tick-timer.js';

describe('tick timer', () => {
  it('ends each sleep on the first grid point at or after its own end, never before', async () => {
    const grid = 40;
    const t = new TickTimer(grid);
    const started = performance.now();
    const ends = await Promise.all([5, 17, 33, 41, 79].map(async (ms) => {
      await t.sleep(ms);
      return { ms, at: performance.now() - started };
    }));
    for (const { ms, at } of ends) {
      expect(at).toBeGreaterThanOrEqual(ms - 1);
      expect(at).toBeLessThan(ms + grid + 30);
    }
    expect(t.pending).toBe(0);
  });

  it('wakes sleepers that fall in the same grid step together', async () => {
    const t = new TickTimer(100);
    // Align to just after a grid point so both sleeps end in the same step.
    await t.sleep(0);
    const woke: number[] = [];
    await Promise.all([10, 60].map((ms) => t.sleep(ms).then(() => woke.push(performance.now()))));
    expect(Math.abs(woke[0]! - woke[1]!)).toBeLessThan(5);
  });

  it('a signal used for one sleep after another ends the sleep pending when it aborts, with one listener for its lifetime', async () => {
    let now = 0;
    const t = new TickTimer(10, () => now);
    const ac = new AbortController();
    let added = 0;
    const add = ac.signal.addEventListener.bind(ac.signal);
    ac.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      added++;
      add(...args);
    }) as AbortSignal['addEventListener'];
    // Sleeps that end at their grid point, one after the other on the same signal.
    for (let i = 0; i < 3; i++) {
      const slept = t.sleep(15, ac.signal);
      now += 20;
      await new Promise((r) => setTimeout(r, 40));
      await slept;
    }
    expect(t.pending).toBe(0);
    // Two pending on the signal (and one on another): the abort ends both of its own at once.
    const a = t.sleep(60_000, ac.signal);
    const b = t.sleep(120_000, ac.signal);
    const other = new AbortController();
    const c = t.sleep(60_000, other.signal);
    expect(t.pending).toBe(3);
    ac.abort();
    await Promise.all([a, b]);
    expect(t.pending).toBe(1);
    expect(added).toBe(1);
    other.abort();
    await c;
    expect(t.pending).toBe(0);
  });

  it('wake ends the sleeps of a signal at once without aborting it, and the signal serves later sleeps', async () => {
    const t = new TickTimer(10);
    const ac = new AbortController();
    const other = new AbortController();
    const started = performance.now();
    const a = t.sleep(60_000, ac.signal).then(() => performance.now() - started);
    const b = t.sleep(120_000, ac.signal).then(() => performance.now() - started);
    const c = t.sleep(60_000, other.signal);
    t.wake(ac.signal);
    expect(await a).toBeLessThan(50);
    expect(await b).toBeLessThan(50);
    expect(ac.signal.aborted).toBe(false);
    expect(t.pending).toBe(1);
    // Woken, not forgotten: a later sleep on the signal still ends when it aborts.
    const later = t.sleep(60_000, ac.signal);
    t.wake(new AbortController().signal); // a signal with no sleeps: nothing happens
    expect(t.pending).toBe(2);
    ac.abort();
    await later;
    other.abort();
    await c;
    expect(t.pending).toBe(0);
  });

  it('an abort ends only that sleep, at once, and the others still wake', async () => {
    const t = new TickTimer(20);
    const ac = new AbortController();
    const started = performance.now();
    const aborted = t.sleep(10_000, ac.signal).then(() => performance.now() - started);
    const other = t.sleep(30).then(() => performance.now() - started);
    ac.abort();
    expect(await aborted).toBeLessThan(50);
    expect(await other).toBeGreaterThanOrEqual(29);
    expect(t.pending).toBe(0);
    const pre = new AbortController();
    pre.abort();
    await t.sleep(10_000, pre.signal);
  });

  it('a later, sooner sleep re-arms the timer earlier', async () => {
    const t = new TickTimer(10);
    const started = performance.now();
    const long = t.sleep(400);
    await t.sleep(20);
    expect(performance.now() - started).toBeLessThan(200);
    await long;
    expect(performance.now() - started).toBeGreaterThanOrEqual(399);
  });

  it('uses a tenth of the poll interval as the grid, at most a second', () => {
    expect(pollGridMs(10_000)).toBe(1_000);
    expect(pollGridMs(60_000)).toBe(1_000);
    expect(pollGridMs(1_000)).toBe(100);
    expect(pollGridMs(10)).toBe(1);
    expect(() => new TickTimer(0)).toThrow(RangeError);
  });
});
