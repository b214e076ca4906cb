//! The settings a model's poller plans with: the configured ones with what the poller learned
//! or was told (settle, poll period, first re-read age), one object for all the pollers that
//! plan with the same figures.
import type { PlannerSettings } from './planner.js';

/** Planning settings made, by the configured settings they extend, then by what they add. */
const plannings = new WeakMap<PlannerSettings, Map<string, PlannerSettings>>();

/**
 * The configured settings with a settle, a poll period and a first re-read age: one object for
 * all the pollers that plan with the same ones (most models of a large instance are quiet,
 * with the same figures), which the planner also keeps what it derives from.
 */
export function planningFor(s: PlannerSettings, settleMs: number, pollEveryMs: number, firstAgeMs: number | undefined): PlannerSettings {
  let made = plannings.get(s);
  if (made === undefined) plannings.set(s, (made = new Map()));
  const key = `${settleMs}/${pollEveryMs}/${firstAgeMs}`;
  let planning = made.get(key);
  if (planning === undefined) {
    const reread = s.reread?.mode === 'sparse' ? { ...s.reread, firstAgeMs } : s.reread;
    planning = { ...s, settleMs, pollEveryMs, ...(reread ? { reread } : {}) };
    // Active models' periods vary with the budget: the map is kept small.
    if (made.size >= 256) made.clear();
    made.set(key, planning);
  }
  return planning;
}
