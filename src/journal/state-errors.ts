//! Recovery from failed state writes. When SQLite cannot write (disk full, I/O error) the
//! transaction is rolled back, so the checkpoint and cursors still say where to resume: the
//! loop that hit the error pauses and starts again from them.
import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import { LogThrottle } from '../telemetry/log-throttle.js';
import { backoffDelay, sleep } from '../time/backoff.js';

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

/**
 * The pauses and log lines of one loop whose state writes fail: an error line at most once
 * a minute (debug lines between), the pause from {@link stateRetryDelay}, and one line once
 * a write succeeds again, after which the next outage starts afresh.
 */
export class StateWriteRetry {
  #failures = 0;
  #errorLines = new LogThrottle(60_000);

  /**
   * @param fields what every line names (the model or the sink)
   * @param messages the error line when writes start failing, the line when they succeed again
   */
  constructor(
    private readonly logger: Logger,
    private readonly fields: Record<string, string>,
    private readonly messages: { paused: string; resumed: string },
  ) {}

  /** Logs a failed state write; returns the pause before the next try. */
  failed(err: Error & { code: string }): number {
    this.#failures++;
    const delay = stateRetryDelay(this.#failures);
    const fields = { ...this.fields, code: err.code, err: describeError(err), retryInMs: delay };
    if (this.#errorLines.take(performance.now())) this.logger.error(fields, this.messages.paused);
    else this.logger.debug(fields, 'could not write the state file; retrying');
    return delay;
  }

  /** Call after a state write succeeded: says so once if writes had been failing. */
  succeeded(): void {
    if (this.#failures === 0) return;
    this.logger.info(this.fields, this.messages.resumed);
    this.#failures = 0;
    this.#errorLines = new LogThrottle(60_000);
  }
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
