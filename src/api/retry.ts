//! Retry policy of the service client: attempts with backoff and full jitter (time/backoff.ts),
//! `Retry-After` honoured (net/retry-after.ts), and an overall deadline per call that bounds
//! the attempts and the waits between them.
import { systemClock, type Clock } from '../time/clock.js';
import { fullJitterDelay, sleepOrAbort, type BackoffPolicy } from '../time/backoff.js';
import { CallAbort, type AbortWatch } from './call-abort.js';

/** What {@link withRetry} tells its callback about the current attempt. */
export interface AttemptContext {
  /** 0 for the first attempt. */
  readonly attempt: number;
  /** Aborted when the caller aborts or the deadline passes: what the request watches. */
  readonly abort: AbortWatch;
  /** The same abort as an AbortSignal (made when first asked for). */
  readonly signal: AbortSignal;
}

/** The context of one attempt: `signal` is made only if the attempt asks for it. */
class Attempt implements AttemptContext {
  constructor(
    readonly attempt: number,
    readonly abort: CallAbort,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }
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
  // One abort for the call, by the deadline or by the caller's signal (AbortSignal.any would
  // make a composite signal, with weak references and a finalizer, for every request).
  const call = new CallAbort();
  let deadlinePassed = false;
  const deadlineTimer = setTimeout(() => {
    deadlinePassed = true;
    call.abort(new Error('deadline passed'));
  }, Math.max(0, options.deadlineMs));
  const outer = options.signal;
  const following = outer ? follow(outer, call) : undefined;
  let lastError: unknown;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn(new Attempt(attempt, call));
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
    if (following) unfollow(following, call);
  }
}

/**
 * Per caller's signal, the aborts of its calls in progress, in a short array of slots (a
 * free slot is undefined): a caller has a call or two out at a time, and a set that grows to
 * one entry and shrinks back at every call reallocated its table each time.
 */
const followers = new WeakMap<AbortSignal, Array<CallAbort | undefined>>();

/**
 * Aborts `call` when `outer` aborts. A caller's signal lives long (a model's poller
 * passes the same one to every request): one listener on it for all its calls costs far
 * less than adding and removing one per call. Returns what {@link unfollow} takes.
 */
function follow(outer: AbortSignal, call: CallAbort): Array<CallAbort | undefined> | undefined {
  if (outer.aborted) {
    call.abort(outer.reason);
    return undefined;
  }
  let calls = followers.get(outer);
  if (!calls) {
    const mine: Array<CallAbort | undefined> = [];
    outer.addEventListener('abort', () => {
      for (const c of mine) c?.abort(outer.reason);
      mine.length = 0;
    }, { once: true });
    followers.set(outer, mine);
    calls = mine;
  }
  const free = calls.indexOf(undefined);
  if (free === -1) calls.push(call);
  else calls[free] = call;
  return calls;
}

/** Frees the slot of `call` (it ended). */
function unfollow(calls: Array<CallAbort | undefined>, call: CallAbort): void {
  const at = calls.indexOf(call);
  if (at !== -1) calls[at] = undefined;
}
