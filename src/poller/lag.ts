//! How far behind a model is: now minus its watermark (its start before the first window
//! completes). Read at scrape time from the store's cached checkpoints, so the figure keeps
//! growing while a window is stuck, polling is paused or the journal is full.
import type { Checkpoint, StateStore } from '../journal/store.js';

/** Seconds from what the model has reached (watermark, else start) to `nowMs`; never negative. */
export function lagSeconds(cp: Pick<Checkpoint, 'watermarkMs' | 'startMs'>, nowMs: number): number {
  return Math.max(0, (nowMs - (cp.watermarkMs ?? cp.startMs)) / 1000);
}

/** The lag of each of `models` that has a checkpoint (a model not polled yet has none). */
export function* modelLags(store: StateStore, models: Iterable<{ id: string }>, nowMs: number): Generator<readonly [string, number]> {
  for (const { id } of models) {
    const cp = store.getCheckpoint(id);
    if (cp) yield [id, lagSeconds(cp, nowMs)];
  }
}
