//! What a model's configured `start_at` means once the model has a checkpoint. `start_at` is
//! resolved once, when the model is first seen, and stored as its start together with the
//! setting as written; a later change of `start_at` does not move the start (that would skip
//! or re-deliver logs). A change is said once, at the start or reload that first sees it, with
//! both settings, and then recorded, so the next start says nothing.
import type { Logger } from 'pino';
import type { Checkpoint } from '../journal/store.js';
import { formatDuration } from '../time/duration.js';
import type { StartAt } from '../time/start-at.js';

/** `start_at` as it is written in the config. */
export function showStartAt(startAt: StartAt): string {
  switch (startAt.kind) {
    case 'now':
      return 'now';
    case 'relative':
      return `-${formatDuration(Math.abs(startAt.ms))}`;
    case 'absolute':
      return new Date(startAt.ms).toISOString();
  }
}

/** One model's configured `start_at` and its checkpoint (absent for a model never polled). */
export interface StartAtOfModel {
  id: string;
  startAt: StartAt;
  checkpoint: Pick<Checkpoint, 'startMs' | 'startAt'> | undefined;
}

/** Models whose `start_at` went from one setting to another: said in one line. */
export interface StartAtChange {
  previous: string;
  configured: string;
  models: string[];
}

/**
 * The models whose configured `start_at` differs from the setting their stored start answers
 * to, grouped by (previous, configured). A checkpoint of an earlier version has no setting
 * stored: an absolute `start_at` that names another instant than its start counts as a change;
 * anything else is adopted silently. `adopt` receives every model whose setting is to be
 * recorded (the changed ones included).
 */
export function startAtChanges(models: readonly StartAtOfModel[], adopt: (id: string, setting: string) => void): StartAtChange[] {
  const groups = new Map<string, StartAtChange>();
  for (const m of models) {
    const cp = m.checkpoint;
    if (!cp) continue;
    const configured = showStartAt(m.startAt);
    if (cp.startAt === configured) continue;
    let previous = cp.startAt;
    if (previous === undefined && m.startAt.kind === 'absolute' && Math.floor(m.startAt.ms) !== cp.startMs) previous = new Date(cp.startMs).toISOString();
    adopt(m.id, configured);
    if (previous === undefined) continue;
    const key = `${previous}\u0000${configured}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { previous, configured, models: [] }));
    g.models.push(m.id);
  }
  return [...groups.values()];
}

/** How many model ids a line names; the rest are counted. */
const NAMED_MODELS = 10;

/** Logs each change at info: one line per pair of settings, whatever the number of models. */
export function logStartAtChanges(logger: Logger, changes: readonly StartAtChange[]): void {
  for (const c of changes) {
    const named = c.models.slice(0, NAMED_MODELS);
    logger.info(
      { start_at: c.configured, previous: c.previous, count: c.models.length, models: named, ...(c.models.length > named.length ? { more: c.models.length - named.length } : {}) },
      'start_at changed; models with a checkpoint keep it and resume from it (start_at applies only to models without one); ' +
        'to start them over from start_at, stop mls and move the state file aside (every model then starts over, and sinks receive their entries again)',
    );
  }
}
