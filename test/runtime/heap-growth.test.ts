import { describe, expect, it } from 'vitest';
import { HeapGrowth } from '../../src/runtime/heap-growth.js';

/** A tracker on a hand-driven clock; `at(ms)` sets the clock, `tick(ms)` sets it and ticks. */
function tracker(options: ConstructorParameters<typeof HeapGrowth>[0] = {}) {
  const set: string[] = [];
  let t = 0;
  const g = new HeapGrowth({ nodeFlags: [], setFlags: (f) => set.push(f), now: () => t, ...options });
  const at = (ms: number) => void (t = ms);
  const tick = (ms: number) => {
    t = ms;
    g.tick();
  };
  return { g, set, at, tick };
}

describe('heap growth by load', () => {
  it('asks for the larger factor once entries arrive fast, and gives it back after a quiet spell', () => {
    const { g, set, tick } = tracker();
    tick(0);
    g.noteEntries(5_000);
    tick(1_000); // 5,000/s: below the threshold
    expect(set).toEqual([]);
    g.noteEntries(30_000);
    tick(2_000);
    expect(set).toEqual(['--heap-growing-percent=150']);
    expect(g.busy).toBe(true);
    for (let t = 3_000; t <= 11_000; t += 1_000) {
      g.noteEntries(t === 6_000 ? 25_000 : 100); // one busy second in between restarts the quiet spell
      tick(t);
    }
    expect(set).toHaveLength(1);
    tick(12_000);
    tick(16_000); // ten quiet seconds since 6 s
    expect(set).toEqual(['--heap-growing-percent=150', '--heap-growing-percent=0']);
    expect(g.busy).toBe(false);
  });

  it('switches as soon as a second\'s worth at the threshold has arrived, without waiting for the tick', () => {
    const { g, set, at, tick } = tracker();
    tick(0);
    at(400);
    g.noteEntries(19_999);
    expect(set).toEqual([]);
    g.noteEntries(1);
    expect(set).toEqual(['--heap-growing-percent=150']);
    g.noteEntries(50_000);
    tick(900);
    expect(set).toHaveLength(1);
  });

  it('judges the rate over the time that passed, not per call', () => {
    const { g, set, at, tick } = tracker({ busyEntriesPerSec: 1_000 });
    tick(0);
    at(2_000);
    g.noteEntries(1_500); // 750/s over the two seconds
    tick(2_000);
    expect(set).toEqual([]);
    at(2_400);
    g.noteEntries(600); // judged over a second at least: 600/s
    expect(set).toEqual([]);
    tick(2_500); // 1,200/s over the half second since the tick
    expect(set).toEqual(['--heap-growing-percent=150']);
  });

  it('leaves the factor alone when the operator set it, and resets to V8 on stop', () => {
    for (const flag of ['--heap-growing-percent=50', '--heap_growing_percent=50']) {
      const { g, set, tick } = tracker({ nodeFlags: ['--max-old-space-size=512', flag] });
      expect(g.enabled).toBe(false);
      tick(0);
      g.noteEntries(1e6);
      tick(1_000);
      expect(set).toEqual([]);
    }
    const told: Array<[boolean, string]> = [];
    const { g, set, tick } = tracker({ busyPercent: 300, onSwitch: (busy, flag) => told.push([busy, flag]) });
    g.reset(); // nothing to give back
    tick(0);
    g.noteEntries(1e6);
    tick(1_000);
    g.reset();
    expect(set).toEqual(['--heap-growing-percent=300', '--heap-growing-percent=0']);
    expect(told).toEqual([
      [true, '--heap-growing-percent=300'],
      [false, '--heap-growing-percent=0'],
    ]);
  });
});
