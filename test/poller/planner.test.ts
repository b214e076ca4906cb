import { describe, expect, it } from 'vitest';
import { firstWindowKind, planStateAfterPiece, planWindows, pruneHorizonMs, type PlannerCheckpoint, type PlannerSettings } from '../../src/poller/planner.js';

const S = { lookbackMs: 300_000, settleMs: 2_000, maxWindowMs: 3_600_000 };
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

describe('window planner', () => {
  it('starts a new model at its start and ends at now - settle', () => {
    expect(planWindows({ startMs: T0, watermarkMs: undefined }, T0 + 60_000, S)).toEqual([{ fromMs: T0, toMs: T0 + 58_000, kind: 'fresh' }]);
  });

  it('re-reads the lookback before the watermark, never before the start', () => {
    const w = T0 + 600_000;
    expect(planWindows({ startMs: T0, watermarkMs: w }, w + 10_000, S)).toEqual([{ fromMs: w - 300_000, toMs: w + 8_000, kind: 'fresh' }]);
    expect(planWindows({ startMs: T0, watermarkMs: T0 + 60_000 }, T0 + 70_000, S)).toEqual([{ fromMs: T0, toMs: T0 + 68_000, kind: 'fresh' }]);
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
    const horizon = pruneHorizonMs({ startMs: T0, watermarkMs: w }, S);
    const [next] = planWindows({ startMs: T0, watermarkMs: w }, w + 60_000, S);
    expect(horizon).toBeLessThan(next!.fromMs);
  });
});

/**
 * Simulates the poll loop over `durationMs`: fetch what is due, adopt the plan state, sleep
 * the interval. `entriesAt(fromMs, toMs)` gives the newest entry time a read returns (a busy
 * model by default: an entry at the end of every read); undefined for none.
 */
function simulate(
  s: PlannerSettings,
  durationMs: number,
  startMs = T0,
  entriesAt: (fromMs: number, toMs: number) => number | undefined = (_f, t) => t,
  /** Cuts every window to at most this span, as a poller does whose window fetch reached a cap. */
  cut?: { spanMs: number; planState: (cp: PlannerCheckpoint, piece: { fromMs: number; toMs: number }, nowMs: number, planned: string | undefined) => string | undefined },
): { reads: Array<{ fromMs: number; toMs: number; atMs: number; kind: string }>; cp: PlannerCheckpoint } {
  let cp: PlannerCheckpoint = { startMs, watermarkMs: undefined };
  const reads: Array<{ fromMs: number; toMs: number; atMs: number; kind: string }> = [];
  for (let now = startMs; now <= startMs + durationMs; now += s.intervalMs!) {
    for (let guard = 0; guard < 50; guard++) {
      const [planned] = planWindows(cp, now, s);
      // the poller's cheap question after each poll has the same answer, at any time
      for (const at of [now, now + 999, now + s.intervalMs! / 2]) expect(firstWindowKind(cp, at, s), `at ${at}`).toBe(planWindows(cp, at, s)[0]?.kind);
      if (!planned) break;
      let w = planned;
      if (cut && w.toMs - w.fromMs > cut.spanMs) {
        const piece = { fromMs: w.fromMs, toMs: w.fromMs + cut.spanMs };
        w = { ...w, ...piece, planStateAfter: cut.planState(cp, piece, now, w.planStateAfter) };
      }
      reads.push({ fromMs: w.fromMs, toMs: w.toMs, atMs: now, kind: w.kind });
      const newest = entriesAt(w.fromMs, w.toMs);
      const lastEntryNs = newest === undefined || (cp.lastEntryNs !== undefined && BigInt(newest) * 1_000_000n < cp.lastEntryNs) ? cp.lastEntryNs : BigInt(newest) * 1_000_000n;
      cp = { ...cp, lastEntryNs, watermarkMs: Math.max(cp.watermarkMs ?? -Infinity, w.kind === 'fresh' ? w.toMs : -Infinity), planState: w.planStateAfter ?? cp.planState };
      if (cp.watermarkMs === -Infinity) cp.watermarkMs = undefined;
    }
  }
  return { reads, cp };
}

describe('sparse re-read schedule', () => {
  const SPARSE: PlannerSettings = { lookbackMs: 300_000, settleMs: 2_000, maxWindowMs: 3_600_000, intervalMs: 10_000, reread: { mode: 'sparse', agesMs: [30_000] } };

  it('reads every instant fresh, then again after 30 s, then again after the lookback', () => {
    const { reads } = simulate(SPARSE, 3_600_000, T0);
    // every millisecond instant in the steady part must be covered by a read at age ~0, one at age >= 30 s and one at age >= lookback
    for (let t = T0 + 600_000; t < T0 + 3_000_000; t += 997) {
      const covering = reads.filter((r) => r.fromMs <= t && t <= r.toMs);
      const ages = covering.map((r) => r.atMs - t);
      expect(Math.min(...ages)).toBeLessThan(15_000);
      expect(ages.some((a) => a >= 30_000)).toBe(true);
      expect(ages.some((a) => a >= 300_000)).toBe(true);
      // away from window boundaries (shared inclusive milliseconds), exactly three reads
      expect(covering.filter((r) => r.fromMs < t && t < r.toMs).length).toBeLessThanOrEqual(3);
    }
  });

  it('reads each span about three times, ten times fewer than the sliding window', () => {
    const span = 3_600_000;
    const readMs = (rs: Array<{ fromMs: number; toMs: number }>) => rs.reduce((n, r) => n + (r.toMs - r.fromMs), 0);
    const sparse = simulate(SPARSE, span).reads;
    const sliding = simulate({ ...SPARSE, reread: { mode: 'sliding' } }, span).reads;
    const sparseAmp = readMs(sparse) / span;
    const slidingAmp = readMs(sliding) / span;
    expect(sparseAmp).toBeLessThanOrEqual(3.05);
    expect(slidingAmp / sparseAmp).toBeGreaterThan(9);
  });

  it('windows cut short keep every instant read at every age when the state after the shorter piece is adopted', () => {
    const coverage = (reads: Array<{ fromMs: number; toMs: number; atMs: number }>) => {
      let missing = 0;
      for (let t = T0 + 600_000; t < T0 + 3_000_000; t += 997) {
        const ages = reads.filter((r) => r.fromMs <= t && t <= r.toMs).map((r) => r.atMs - t);
        if (!(Math.min(...ages) < 30_000 && ages.some((a) => a >= 30_000) && ages.some((a) => a >= 300_000))) missing++;
      }
      return missing;
    };
    const spanMs = 4_000;
    const cutRight = simulate(SPARSE, 3_600_000, T0, undefined, { spanMs, planState: (cp, piece, now) => planStateAfterPiece(cp, piece, now, SPARSE) });
    expect(coverage(cutRight.reads)).toBe(0);
    for (const r of cutRight.reads) expect(r.toMs - r.fromMs).toBeLessThanOrEqual(spanMs);
    // The state planned for the whole window would mark the part cut off as re-read.
    const cutWrong = simulate(SPARSE, 3_600_000, T0, undefined, { spanMs, planState: (_cp, _piece, _now, planned) => planned });
    expect(coverage(cutWrong.reads)).toBeGreaterThan(100);
    expect(planStateAfterPiece({ startMs: T0, watermarkMs: T0 }, { fromMs: T0, toMs: T0 + 1 }, T0, { ...SPARSE, reread: { mode: 'sliding' } })).toBeUndefined();
  });

  it('a catch-up from an old start reads the missed span once, without extra re-reads', () => {
    const cp = { startMs: T0, watermarkMs: undefined };
    const windows = planWindows(cp, T0 + 3 * 3_600_000, { ...SPARSE });
    expect(windows.every((w) => w.kind === 'fresh')).toBe(true);
    expect(windows).toHaveLength(3);
    const after = { startMs: T0, watermarkMs: windows.at(-1)!.toMs, planState: windows.at(-1)!.planStateAfter };
    expect(planWindows(after, T0 + 3 * 3_600_000 + 1_000, SPARSE)).toEqual([]);
  });

  it('a quiet model folds its re-reads into one request per interval and still reads every instant at every age', () => {
    const { reads } = simulate(SPARSE, 3_600_000, T0, () => undefined);
    const steady = reads.filter((r) => r.atMs >= T0 + 600_000);
    const polls = new Set(steady.map((r) => r.atMs)).size;
    expect(steady.length).toBe(polls);
    expect(steady.every((r) => r.kind === 'fresh')).toBe(true);
    for (let t = T0 + 600_000; t < T0 + 3_000_000; t += 997) {
      const ages = reads.filter((r) => r.fromMs <= t && t <= r.toMs).map((r) => r.atMs - t);
      expect(Math.min(...ages)).toBeLessThan(15_000);
      expect(ages.some((a) => a >= 30_000)).toBe(true);
      expect(ages.some((a) => a >= 300_000)).toBe(true);
    }
  });

  it('stops folding re-reads over a span once an entry was seen in it, so nothing is read twice for it', () => {
    // One entry at T0 + 1000 s: re-reads of the span holding it run as their own windows again.
    const at = T0 + 1_003_333;
    const { reads } = simulate(SPARSE, 1_800_000, T0, (f, t) => (f <= at && at <= t ? at : undefined));
    const covering = reads.filter((r) => r.fromMs <= at && at <= r.toMs);
    expect(covering.map((r) => r.kind)).toEqual(['fresh', 'reread', 'reread']);
    const ages = covering.map((r) => r.atMs - at);
    expect(ages[1]).toBeGreaterThanOrEqual(30_000);
    expect(ages[2]).toBeGreaterThanOrEqual(300_000);
    // Before the entry and once its span has passed the lookback, the model is quiet again: one request per poll.
    const late = reads.filter((r) => r.atMs >= at + 400_000);
    expect(late.length).toBe(new Set(late.map((r) => r.atMs)).size);
  });

  it('tells the kind of the first window due without planning it, with learned ages and faster polls too', () => {
    const variants: PlannerSettings[] = [
      SPARSE,
      { ...SPARSE, pollEveryMs: 1_000 },
      { ...SPARSE, reread: { mode: 'sparse', agesMs: [30_000, 120_000], firstAgeMs: 6_000 }, pollEveryMs: 2_000 },
      { ...SPARSE, reread: { mode: 'sliding' } },
    ];
    let kinds = new Set<string | undefined>();
    for (const v of variants) {
      // busy, quiet, and one entry: simulate() checks firstWindowKind at every step
      for (const entries of [undefined, () => undefined, (f: number, t: number) => (f <= T0 + 500_000 && T0 + 500_000 <= t ? T0 + 500_000 : undefined)]) {
        const { reads } = simulate(v, 900_000, T0, entries);
        kinds = new Set([...kinds, ...reads.map((r) => r.kind)]);
      }
    }
    expect([...kinds].sort()).toEqual(['fresh', 'reread']);
  });

  it('still reads every instant at the configured first age when a re-read at an earlier age was learned', () => {
    const learned: PlannerSettings = { ...SPARSE, reread: { mode: 'sparse', agesMs: [30_000], firstAgeMs: 6_000 }, pollEveryMs: 2_000 };
    // Busy, and quiet (its re-reads folded into its fresh reads).
    for (const entries of [undefined, () => undefined]) {
      const { reads } = simulate(learned, 1_800_000, T0, entries);
      for (let t = T0 + 600_000; t < T0 + 1_200_000; t += 997) {
        const ages = reads.filter((r) => r.fromMs <= t && t <= r.toMs).map((r) => r.atMs - t);
        expect(Math.min(...ages)).toBeLessThan(15_000);
        // The learned re-read, well before the configured age...
        expect(ages.some((a) => a >= 6_000 && a < 30_000)).toBe(true);
        // ...and the configured one still, within its chunk and a poll: not left to the read at lookback.
        expect(ages.some((a) => a >= 30_000 && a < 60_000)).toBe(true);
        expect(ages.some((a) => a >= 300_000)).toBe(true);
      }
    }
  });

  it('starts a learned re-read where the configured first re-read has got to, not at the model start', () => {
    const now = T0 + 3_600_000;
    const cp: PlannerCheckpoint = { startMs: T0, watermarkMs: now - 2_000, planState: `{"f":{"30000":${now - 30_000},"300000":${now - 300_000}}}`, lastEntryNs: BigInt(now - 2_000) * 1_000_000n };
    const learned: PlannerSettings = { ...SPARSE, reread: { mode: 'sparse', agesMs: [30_000], firstAgeMs: 6_000 }, pollEveryMs: 2_000 };
    const windows = planWindows(cp, now, learned);
    expect(windows.map((w) => w.kind)).toEqual(['reread']);
    expect(windows[0]).toMatchObject({ fromMs: now - 30_000, toMs: now - 6_000, first: true });
  });

  it('never prunes keys a pending re-read can still reach', () => {
    const { cp } = simulate(SPARSE, 1_200_000);
    const horizon = pruneHorizonMs({ ...cp, watermarkMs: cp.watermarkMs! }, SPARSE);
    for (let now = T0 + 1_200_000; now < T0 + 1_500_000; now += 10_000) {
      for (const w of planWindows(cp, now, SPARSE)) expect(w.fromMs).toBeGreaterThan(horizon);
    }
  });
});
