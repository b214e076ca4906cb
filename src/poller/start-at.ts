//! What a model's configured `start_at` means once the model has a checkpoint. `start_at` is
//! resolved once, when the model is first seen, and stored as its start; a later change of
//! `start_at` does not move it (that would skip or re-deliver logs). This says so in the log,
//! so that a changed `start_at` is never ignored silently.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Checkpoint } from '../journal/store.js';
import { formatDuration } from '../time/duration.js';
import { resolveStart, type StartAt } from '../time/start-at.js';

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

/** A log line about how `start_at` relates to a stored start, or `undefined` when there is nothing to say. */
export function startAtNote(startAt: StartAt, cp: Pick<Checkpoint, 'startMs' | 'watermarkMs'>, nowMs: number): { fields: Record<string, string>; msg: string } | undefined {
  const configured = resolveStart(startAt, nowMs);
  if (startAt.kind === 'absolute' && Math.floor(configured) === cp.startMs) return undefined;
  const fields = {
    start_at: showStartAt(startAt),
    storedStart: new Date(cp.startMs).toISOString(),
    configuredStart: new Date(configured).toISOString(),
    resumesFrom: new Date(cp.watermarkMs ?? cp.startMs).toISOString(),
  };
  const restart = 'to start this model over from start_at, stop mls and move the state file aside (every model then starts over, and sinks receive their entries again)';
  if (startAt.kind === 'absolute') {
    return { fields, msg: `start_at differs from this model's stored start: the model keeps its checkpoint and resumes from it; ${restart}` };
  }
  // A relative start names a different instant at every start: say once which one is used.
  return { fields, msg: `resuming from the stored checkpoint: start_at (${fields.start_at}) applies only to a model without one; ${restart}` };
}

/** Logs {@link startAtNote} at info for a model that has a checkpoint; `logger` names the model. */
export function logStartAt(logger: Logger, startAt: StartAt, cp: Checkpoint | undefined, nowMs: number): void {
  const note = cp && startAtNote(startAt, cp, nowMs);
  if (note) logger.info(note.fields, note.msg);
}

/** The models of both configs whose `start_at` (their own, else `poll.start_at`) differs, with the new one. */
export function changedStartAt(prev: Config, next: Config): Array<{ id: string; startAt: StartAt }> {
  const before = new Map(prev.models.map((m) => [m.id, JSON.stringify(m.start_at ?? prev.poll.start_at)]));
  const out: Array<{ id: string; startAt: StartAt }> = [];
  for (const m of next.models) {
    const startAt = m.start_at ?? next.poll.start_at;
    const was = before.get(m.id);
    if (was !== undefined && was !== JSON.stringify(startAt)) out.push({ id: m.id, startAt });
  }
  return out;
}
