//! The window planner: a pure function from a model's checkpoint, the current time and
//! the poll settings to the windows to fetch next. Paging, checkpoints and dedupe do not
//! depend on how windows are chosen, only on the windows themselves.

/** The poll settings the planner needs (milliseconds). */
export interface PlannerSettings {
  lookbackMs: number;
  settleMs: number;
  maxWindowMs: number;
}

/** The part of a checkpoint the planner reads. */
export interface PlannerCheckpoint {
  startMs: number;
  watermarkMs: number | undefined;
}

/** A window to fetch: both bounds inclusive, in epoch milliseconds. */
export interface PlannedWindow {
  fromMs: number;
  toMs: number;
}

/**
 * Plans the next windows: `[max(watermark − lookback, start), now − settle]`, cut into
 * consecutive pieces no longer than `maxWindowMs`. Returns no window when there is
 * nothing new to read (the end is not past the watermark, e.g. after the clock stepped back).
 * Completing a piece moves the watermark to its end, so a long catch-up walks the missed
 * span piece after piece.
 */
export function planWindows(cp: PlannerCheckpoint, nowMs: number, s: PlannerSettings): PlannedWindow[] {
  const end = Math.floor(nowMs - s.settleMs);
  const reached = cp.watermarkMs ?? cp.startMs;
  if (end <= reached) return [];
  const begin = Math.max(cp.watermarkMs === undefined ? cp.startMs : cp.watermarkMs - s.lookbackMs, cp.startMs);
  const windows: PlannedWindow[] = [];
  const step = Math.max(1, s.maxWindowMs);
  for (let from = begin; from < end; from += step) {
    windows.push({ fromMs: from, toMs: Math.min(from + step, end) });
  }
  return windows;
}

/** The oldest time any future window can start at: dedupe keys older than this can go. */
export function pruneHorizonMs(watermarkMs: number, s: PlannerSettings): number {
  return watermarkMs - s.lookbackMs - 1_000;
}
