//! Time bounds on work that may never finish (a sink's send, flush or close, the stop of a
//! delivery loop, a healthcheck): it finishes within its bound, or the caller goes on without it. The work itself is not
//! cancelled (a sink that ignores its abort signal cannot be); its late result is ignored.
import { describeError } from '../errors.js';
import { formatDuration } from './duration.js';

/** What {@link within} resolves to when the bound passed first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Resolves as `work` does, or to {@link TIMED_OUT} after `ms`. A synchronous throw of `work`
 * rejects. The timer is unref'd: it never holds the process open.
 */
export async function within<T>(work: () => T | PromiseLike<T>, ms: number): Promise<Awaited<T> | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
    timer.unref();
  });
  try {
    const running = Promise.resolve().then(work);
    // A rejection after the bound passed is nobody's to handle.
    running.catch(() => undefined);
    return await Promise.race([running, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `work` within `ms`; rejects with an error naming `what` when it takes longer or fails. */
export async function withinOrFail<T>(what: string, work: () => T | PromiseLike<T>, ms: number): Promise<Awaited<T>> {
  let result: Awaited<T> | typeof TIMED_OUT;
  try {
    result = await within(work, ms);
  } catch (err) {
    throw new Error(`${what} failed: ${describeError(err)}`, { cause: err });
  }
  if (result === TIMED_OUT) throw new Error(`${what} did not finish within ${formatDuration(ms)}; going on without it`);
  return result;
}
