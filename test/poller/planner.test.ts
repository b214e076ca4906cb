import { describe, expect, it } from 'vitest';
import { planWindows, pruneHorizonMs } from '../../src/poller/planner.js';

const S = { lookbackMs: 300_000, settleMs: 2_000, maxWindowMs: 3_600_000 };
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

describe('window planner', () => {
  it('starts a new model at its start and ends at now - settle', () => {
    expect(planWindows({ startMs: T0, watermarkMs: undefined }, T0 + 60_000, S)).toEqual([{ fromMs: T0, toMs: T0 + 58_000 }]);
  });

  it('re-reads the lookback before the watermark, never before the start', () => {
    const w = T0 + 600_000;
    expect(planWindows({ startMs: T0, watermarkMs: w }, w + 10_000, S)).toEqual([{ fromMs: w - 300_000, toMs: w + 8_000 }]);
    expect(planWindows({ startMs: T0, watermarkMs: T0 + 60_000 }, T0 + 70_000, S)).toEqual([{ fromMs: T0, toMs: T0 + 68_000 }]);
  });

  it('cuts a long catch-up span into pieces no longer than max_window', () => {
    const windows = planWindows({ startMs: T0, watermarkMs: undefined }, T0 + 3 * 3_600_000 + 2_000 + 1_000, S);
    expect(windows).toHaveLength(4);
    for (const w of windows) expect(w.toMs - w.fromMs).toBeLessThanOrEqual(S.maxWindowMs);
    expect(windows[0]!.fromMs).toBe(T0);
    expect(windows.at(-1)!.toMs).toBe(T0 + 3 * 3_600_000 + 1_000);
    for (let i = 1; i < windows.length; i++) expect(windows[i]!.fromMs).toBe(windows[i - 1]!.toMs);
  });

  it('plans nothing when the clock is behind the watermark (a backward clock step)', () => {
    const w = T0 + 3_600_000;
    expect(planWindows({ startMs: T0, watermarkMs: w }, w - 1_800_000, S)).toEqual([]);
    expect(planWindows({ startMs: T0, watermarkMs: w }, w + S.settleMs, S)).toEqual([]);
  });

  it('always makes progress: each completed piece moves the watermark forward', () => {
    let cp = { startMs: T0, watermarkMs: undefined as number | undefined };
    const now = T0 + 5 * 3_600_000;
    let steps = 0;
    for (;;) {
      const [next] = planWindows(cp, now, S);
      if (!next) break;
      expect(next.toMs).toBeGreaterThan(cp.watermarkMs ?? -Infinity);
      cp = { ...cp, watermarkMs: next.toMs };
      steps++;
      expect(steps).toBeLessThan(100);
    }
    expect(cp.watermarkMs).toBe(now - S.settleMs);
  });

  it('prunes only keys older than any future window can reach', () => {
    const w = T0 + 3_600_000;
    const horizon = pruneHorizonMs(w, S);
    const [next] = planWindows({ startMs: T0, watermarkMs: w }, w + 60_000, S);
    expect(horizon).toBeLessThan(next!.fromMs);
  });
});
