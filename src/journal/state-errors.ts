//! Recovery from failed state writes. When SQLite cannot write (disk full, I/O error) the
//! transaction is rolled back, so the checkpoint and cursors still say where to resume: the
//! loop that hit the error pauses and starts again from them.
import { backoffDelay, sleep } from '../poller/sleep.js';

/**
 * The longest pause between retries of a failed state write. Retrying a local write costs
 * nothing, so the loops look again every few seconds and resume soon after space returns.
 */
export const STATE_RETRY_MAX_MS = 5_000;

/**
 * The pause before the `failures`-th consecutive retry (from 1) of a failed state write:
 * jittered, its bound doubling from 1 s up to {@link STATE_RETRY_MAX_MS}, never under 250 ms.
 */
export function stateRetryDelay(failures: number, random: () => number = Math.random): number {
  return Math.max(250, backoffDelay(failures, 500, STATE_RETRY_MAX_MS, random));
}

/** True for an error of SQLite (a failed state read or write). */
export function isStateError(err: unknown): err is Error & { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}

/**
 * Runs `body` until it returns. After a state error, waits the delay `onError` returns
 * (abortable through `signal`) and runs it again; any other error propagates.
 */
export async function retryOnStateErrors(body: () => Promise<void>, onError: (err: Error & { code: string }) => number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      await body();
      return;
    } catch (err) {
      if (!isStateError(err)) throw err;
      await sleep(onError(err), signal);
    }
  }
}
