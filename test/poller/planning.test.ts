import { describe, expect, it } from 'vitest';
import { planningFor } from '../../src/poller/planning.js';
import type { PlannerSettings } from '../../src/poller/planner.js';

describe('planning settings', () => {
  const configured: PlannerSettings = { lookbackMs: 300_000, settleMs: 2_000, maxWindowMs: 3_600_000, intervalMs: 10_000, reread: { mode: 'sparse', agesMs: [30_000] } };

  it('is one object for the same figures, a new one for others, and never changes the configured settings', () => {
    const a = planningFor(configured, 2_000, 10_000, undefined);
    expect(planningFor(configured, 2_000, 10_000, undefined)).toBe(a);
    expect(a).toEqual({ ...configured, settleMs: 2_000, pollEveryMs: 10_000, reread: { mode: 'sparse', agesMs: [30_000], firstAgeMs: undefined } });
    const b = planningFor(configured, 800, 1_000, 4_000);
    expect(b).not.toBe(a);
    expect(b).toMatchObject({ settleMs: 800, pollEveryMs: 1_000, reread: { mode: 'sparse', agesMs: [30_000], firstAgeMs: 4_000 } });
    // Other configured settings (another model's), other objects.
    const other = { ...configured };
    expect(planningFor(other, 2_000, 10_000, undefined)).not.toBe(a);
    expect(configured).toEqual({ lookbackMs: 300_000, settleMs: 2_000, maxWindowMs: 3_600_000, intervalMs: 10_000, reread: { mode: 'sparse', agesMs: [30_000] } });
  });

  it('keeps the sliding schedule as it is', () => {
    const sliding: PlannerSettings = { lookbackMs: 60_000, settleMs: 1_000, maxWindowMs: 600_000, reread: { mode: 'sliding' } };
    expect(planningFor(sliding, 1_000, 5_000, 9_000).reread).toBe(sliding.reread);
  });
});
