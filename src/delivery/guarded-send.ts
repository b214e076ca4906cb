//! One call of a sink's `send`, guarded: a throw, a malformed outcome or (with a timeout) a
//! call that does not finish in time becomes a `retry` outcome naming the sink and the fault,
//! so that nothing a sink does can end its delivery loop or hold it forever.
import type { Sink, SinkBatch, SendOutcome } from '../sinks/contract.js';
import { describeError } from '../errors.js';
import { formatDuration } from '../time/duration.js';
import { checkOutcome } from './outcome-check.js';
import { TIMED_OUT, within } from '../time/bounded.js';

/** How a sink's sends are guarded. */
export interface SendGuard {
  /** The sink's name, for error messages. */
  sink: string;
  /**
   * Longest one call may take (ms). When it passes, the signal given to the sink fires and
   * the call counts as a retry, whether or not the sink heeds the signal. Undefined: no bound
   * (built-in sinks bound their own requests).
   */
  timeoutMs: number | undefined;
  /** Upper bound of a `retry` outcome's `afterMs`. */
  maxAfterMs: number;
}

/** The outcome of one guarded call. */
export interface GuardedOutcome {
  outcome: SendOutcome;
  /** Set when the sink threw, timed out or returned a malformed outcome: a bug in the sink. */
  fault: string | undefined;
}

/** Calls `sink.send(batch, ...)` once under `guard`; never rejects. `signal` aborts the call (stop). */
export async function guardedSend(sink: Sink, batch: SinkBatch, signal: AbortSignal, guard: SendGuard): Promise<GuardedOutcome> {
  const { timeoutMs } = guard;
  if (timeoutMs === undefined) {
    let value: unknown;
    try {
      value = await sink.send(batch, signal);
    } catch (err) {
      return thrown(guard.sink, err);
    }
    return checked(value, guard);
  }
  // The sink gets a signal of its own, which fires on stop and when the bound passes.
  const call = new AbortController();
  const forward = () => call.abort(signal.reason);
  if (signal.aborted) call.abort(signal.reason);
  else signal.addEventListener('abort', forward, { once: true });
  try {
    const value = await within(() => sink.send(batch, call.signal), timeoutMs);
    if (value !== TIMED_OUT) return checked(value, guard);
    const fault = `sink ${guard.sink}: send did not finish within ${formatDuration(timeoutMs)} (its timeout); the batch will be sent again`;
    call.abort(new Error(fault));
    return { outcome: { status: 'retry', error: fault }, fault };
  } catch (err) {
    return thrown(guard.sink, err);
  } finally {
    signal.removeEventListener('abort', forward);
  }
}

function checked(value: unknown, guard: SendGuard): GuardedOutcome {
  const { outcome, violation } = checkOutcome(value, guard.sink, guard.maxAfterMs);
  return { outcome, fault: violation };
}

function thrown(sink: string, err: unknown): GuardedOutcome {
  const fault = `sink ${sink} threw instead of returning an outcome: ${describeError(err)}; the batch will be sent again`;
  return { outcome: { status: 'retry', error: fault }, fault };
}
