//! Recovery from failed state writes. When SQLite cannot write (disk full, I/O error) the
//! transaction is rolled back, so the checkpoint and cursors still say where to resume: the
//! loop that hit the error pauses and starts again from them.
import { sleep } from '../poller/sleep.js';

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
