//! The sink contract, enforced: what a sink's `send` resolved to is checked before the
//! delivery loop acts on it. A value that is not one of the three documented outcomes is a
//! bug in the sink; it becomes a retry (the batch is kept, never dead-lettered or dropped)
//! with an error that says what was wrong, and the loop goes on.
import type { SendOutcome } from '../sinks/contract.js';

/** An outcome fit to act on, and what was wrong with the value the sink returned, if anything. */
export interface CheckedOutcome {
  outcome: SendOutcome;
  /** Set when the sink broke the contract (the outcome is then a retry carrying this text). */
  violation: string | undefined;
}

/**
 * Checks the value a sink's `send` resolved to. `afterMs` is clamped to `maxAfterMs` (the
 * sink's `retry.max_delay`); other keys of the object are ignored.
 */
export function checkOutcome(value: unknown, sink: string, maxAfterMs: number): CheckedOutcome {
  let problem: string | undefined;
  let outcome: SendOutcome | undefined;
  try {
    ({ outcome, problem } = inspect(value, maxAfterMs));
  } catch (err) {
    // A getter of the sink's own object threw while it was read.
    problem = `returned an outcome that could not be read (${err instanceof Error ? err.message : String(err)})`;
  }
  if (problem === undefined && outcome !== undefined) return { outcome, violation: undefined };
  const violation = `sink ${sink} broke the sink contract: send ${problem ?? 'returned no outcome'}; the batch will be sent again`;
  return { outcome: { status: 'retry', error: violation }, violation };
}

function inspect(value: unknown, maxAfterMs: number): { outcome?: SendOutcome; problem?: string } {
  if (value === null || typeof value !== 'object') {
    return { problem: `resolved to ${describeValue(value)} instead of {status: 'ok' | 'retry' | 'reject', ...}` };
  }
  const o = value as Record<string, unknown>;
  const status = o.status;
  switch (status) {
    case 'ok': {
      const state = o.state;
      if (state !== undefined && typeof state !== 'string') return { problem: `returned status 'ok' with a state that is ${describeValue(state)}, not a string` };
      return { outcome: state === undefined ? { status: 'ok' } : { status: 'ok', state } };
    }
    case 'retry': {
      const error = o.error;
      if (typeof error !== 'string') return { problem: `returned status 'retry' with an error that is ${describeValue(error)}, not a string` };
      const afterMs = o.afterMs;
      if (afterMs === undefined) return { outcome: { status: 'retry', error } };
      if (typeof afterMs !== 'number' || !Number.isFinite(afterMs) || afterMs < 0) {
        return { problem: `returned status 'retry' with afterMs ${describeValue(afterMs)}; it must be a finite number of milliseconds ≥ 0` };
      }
      return { outcome: { status: 'retry', error, afterMs: Math.min(afterMs, maxAfterMs) } };
    }
    case 'reject': {
      const error = o.error;
      if (typeof error !== 'string') return { problem: `returned status 'reject' with an error that is ${describeValue(error)}, not a string` };
      return { outcome: { status: 'reject', error } };
    }
    default:
      return { problem: `returned status ${describeValue(status)}; it must be 'ok', 'retry' or 'reject'` };
  }
}

/** A short description of a value for an error message (never the whole of a large value). */
function describeValue(v: unknown): string {
  if (v === undefined || v === null) return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return `${typeof v} ${String(v)}`;
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
