//! Retry policy of the service client: attempts with backoff and full jitter (time/backoff.ts),
//! `Retry-After` honoured (net/retry-after.ts), and an overall deadline per call that bounds
//! the attempts and the waits between them.
import { systemClock, type Clock } from '../time/clock.js';
import { fullJitterDelay, sleepOrAbort, type BackoffPolicy } from '../time/backoff.js';

/** What {@link withRetry} tells its callback about the current attempt. */
export interface AttemptContext {
  /** 0 for the first attempt. */
  readonly attempt: number;
  /** Aborted when the caller aborts or the deadline passes. */
  readonly signal: AbortSignal;
}

/** Options of {@link withRetry}. */
export interface RetryOptions extends BackoffPolicy {
  /** Total time for all attempts and waits, from the first attempt. */
  deadlineMs: number;
  /** Whether an error may go away on a retry. */
  isRetryable(err: unknown): boolean;
  /** The wait the server asked for with this error (`Retry-After`), if any. It is a minimum. */
  retryAfterMs?(err: unknown): number | undefined;
  /** The error to throw when the deadline cuts the first attempt short (later ones throw the previous error). */
  deadlineError(abortError: unknown): unknown;
  /** Called before each wait. */
  onRetry?(info: { attempt: number; delayMs: number; error: unknown }): void;
  /** Aborts the whole call; its reason is thrown. */
  signal?: AbortSignal;
  clock?: Clock;
  random?: () => number;
  /** Waits `ms` or rejects with the signal's reason; injectable for tests. */
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
}

/**
 * Runs `fn` until it succeeds, a non-retryable error occurs, or the next wait would end
 * after the deadline; then the last error is thrown. A `Retry-After` longer than what
 * remains of the deadline ends the call at once (the error carries the wait, so the
 * caller can schedule). An attempt still running at the deadline is aborted, and the
 * error of the attempt before it is thrown.
 */
export async function withRetry<T>(fn: (ctx: AttemptContext) => Promise<T>, options: RetryOptions): Promise<T> {
  const clock = options.clock ?? systemClock;
  const wait = options.sleep ?? sleepOrAbort;
  const deadlineAt = clock.now() + options.deadlineMs;
  // One abort for the call, by the deadline or by the caller's signal.
  const call = new AbortController();
  let deadlinePassed = false;
  const deadlineTimer = setTimeout(() => {
    deadlinePassed = true;
    call.abort(new Error('deadline passed'));
  }, Math.max(0, options.deadlineMs));
  const outer = options.signal;
  const onAbort = (): void => call.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  let lastError: unknown;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn({ attempt, signal: call.signal });
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (deadlinePassed) throw lastError ?? options.deadlineError(err);
        if (!options.isRetryable(err)) throw err;
        lastError = err;
      }
      const remaining = deadlineAt - clock.now();
      const jitter = fullJitterDelay(attempt, options, options.random);
      const asked = options.retryAfterMs?.(lastError);
      const delayMs = asked === undefined ? jitter : Math.max(asked, jitter);
      if (delayMs >= remaining) throw lastError;
      options.onRetry?.({ attempt: attempt + 1, delayMs, error: lastError });
      try {
        await wait(delayMs, call.signal);
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        throw deadlinePassed ? lastError : err;
      }
    }
  } finally {
    clearTimeout(deadlineTimer);
    outer?.removeEventListener('abort', onAbort);
  }
}
