//! The shapes of a window as the checkpoints record it (the window a first page starts, how a
//! page ends its fetch) and what ending a window does to a checkpoint: pure functions, so
//! the statements that write them and the cache that mirrors them agree.
import type { Checkpoint } from './checkpoint-reads.js';

/** A window not yet recorded: the first page's transaction records it (saving a commit per window). */
export interface WindowStart {
  fromMs: number;
  toMs: number;
  planStateAfter?: string | undefined;
}

/**
 * How a page ends its window fetch. `tokenHash` (hex) is added to the window's set of
 * tokens followed, in the same transaction that stores the token.
 */
export type PageContinuation = { nextToken: string; tokenHash?: string } | { end: true };

/**
 * `cp` once window `begin` ended as fetch `fetchId`: the watermark moved to the window's end
 * (never back), the planned state adopted, no window in progress. What the statements that
 * end a window write, for the cache.
 */
export function windowEnded(cp: Checkpoint, begin: WindowStart, fetchId: number, nowMs: number): Checkpoint {
  const ended = { ...cp };
  endWindowInPlace(ended, begin, fetchId, nowMs);
  return ended;
}

/** {@link windowEnded}, written into `cp` itself. */
export function endWindowInPlace(cp: Checkpoint, begin: WindowStart, fetchId: number, nowMs: number): void {
  const toMs = Math.ceil(begin.toMs);
  cp.watermarkMs = Math.max(cp.watermarkMs ?? toMs, toMs);
  cp.window = undefined;
  cp.fetchId = fetchId;
  cp.planState = begin.planStateAfter ?? cp.planState;
  cp.updatedMs = nowMs;
}

/**
 * The parameters of `endQuiet` for a cached checkpoint that is ahead of the file: the file
 * then holds it as cached, its time of change included (not the time it was written).
 */
export function quietRow(cp: Checkpoint) {
  return { modelId: cp.modelId, toMs: cp.watermarkMs ?? null, planState: cp.planState ?? null, fetchId: cp.fetchId, now: cp.updatedMs };
}

/**
 * How long the checkpoint updates of quiet windows wait to be written, for `models` models:
 * 6 ms per model, between 1 s and 60 s. Each write touches most of the checkpoint table's
 * pages once thousands of models are due every second, and a model polled several times in
 * between is written once: with 10,000 models polled every 10 s, a write every 60 s writes
 * each checkpoint once instead of six times. A crash then has at most that many seconds of
 * empty windows read again, which the next poll of each quiet model does in one request.
 */
export function quietFlushDelayMs(models: number): number {
  return Math.min(60_000, Math.max(1_000, 6 * models));
}
