//! The steady clock: it follows the wall clock while the two agree (slewing included), and
//! when the wall clock steps it keeps time by the monotonic clock and says so once.
import { describe, expect, it } from 'vitest';
import { steadyClock } from '../../src/time/clock.js';

/** A wall and a monotonic clock moved by hand. */
function clocks(startWall = 1_800_000_000_000) {
  const c = { wall: startWall, mono: 1_000, steps: [] as number[] };
  const clock = steadyClock({ wall: () => c.wall, monotonic: () => c.mono, stepToleranceMs: 5_000, onStep: (d) => c.steps.push(d) });
  const advance = (ms: number) => {
    c.wall += ms;
    c.mono += ms;
  };
  return { c, clock, advance };
}

describe('steadyClock', () => {
  it('reads the wall clock while it agrees with the monotonic one, slewing included', () => {
    const { c, clock, advance } = clocks();
    expect(clock.now()).toBe(c.wall);
    advance(1_000);
    expect(clock.now()).toBe(c.wall);
    // NTP slews the wall clock by 3 s over time: followed, and the anchor moves with it.
    c.wall += 3_000;
    expect(clock.now()).toBe(c.wall);
    c.wall += 3_000;
    expect(clock.now()).toBe(c.wall);
    expect(c.steps).toEqual([]);
  });

  it('does not follow a step forward or back: time goes on by the monotonic clock, each step said once', () => {
    const { c, clock, advance } = clocks();
    const t0 = clock.now();
    c.wall += 3_600_000; // an hour forward
    advance(500);
    expect(clock.now()).toBe(t0 + 500);
    advance(500);
    expect(clock.now()).toBe(t0 + 1_000);
    expect(c.steps).toEqual([3_600_000]);
    c.wall -= 2 * 3_600_000; // now an hour behind
    advance(1_000);
    expect(clock.now()).toBe(t0 + 2_000);
    expect(c.steps).toEqual([3_600_000, -3_600_000]);
    // Back in agreement: the wall clock is read again, and nothing more is said.
    c.wall += 3_600_000;
    advance(1_000);
    expect(clock.now()).toBe(c.wall);
    expect(clock.now()).toBe(t0 + 3_000);
    expect(c.steps).toEqual([3_600_000, -3_600_000]);
  });

  it('keeps going forward through steps larger than the tolerance, whichever way the wall clock jumps', () => {
    const { c, clock, advance } = clocks();
    let last = clock.now();
    for (const jump of [10_000, -20_000, 0, 3_600_000, -3_600_000, 10_000, 0]) {
      c.wall += jump;
      for (let i = 0; i < 5; i++) {
        advance(100);
        const t = clock.now();
        expect(t).toBeGreaterThanOrEqual(last);
        last = t;
      }
    }
  });
});
