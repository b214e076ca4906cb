//! Keeps a sink's delivery loop alive and keeps account of the sink's health. A loop that
//! fails for any reason starts again from the committed cursor: after a state-write failure
//! once the state file is writable (see journal/state-errors.ts), after anything else (a bug,
//! ours or the sink's) after a backoff that grows while it keeps failing. Faults show in
//! `/status` (`lastError`), in `mls_sink_errors_total` and, once a sink has failed for longer
//! than `health.max_lag`, in `/readyz`.
import type { Metrics } from '../telemetry/metrics.js';
import { describeError } from '../errors.js';
import { retryOnStateErrors } from '../journal/state-errors.js';
import { backoffDelay, sleep } from '../time/backoff.js';
import type { FailureLog } from './failure-log.js';

/** What a sink's delivery loop reports about the sink: its last error, and since when it has been failing. */
export class SinkHealth {
  /** The last failed send or fault, until a batch is delivered. */
  lastError: { message: string; atMs: number } | undefined;
  /**
   * Since when (clock ms) the sink has failed without an acknowledgement in between: the
   * first failed send or fault after the last batch it took. Undefined while it delivers
   * (or has nothing to deliver).
   */
  failingSinceMs: number | undefined;
  /** Failures of the loop since it last settled a batch (the backoff's attempt). */
  #crashes = 0;

  constructor(private readonly o: { sink: string; metrics: Metrics; log: FailureLog; now(): number }) {}

  /** A send failed (a retry or a rejection). */
  failed(message: string): void {
    const now = this.o.now();
    this.lastError = { message, atMs: now };
    this.failingSinceMs ??= now;
  }

  /** The sink broke its contract, or the loop failed: counted and logged (rate-limited) as well. */
  fault(message: string, fields: Record<string, unknown> = {}): void {
    this.failed(message);
    this.o.metrics.sinkErrors.inc({ sink: this.o.sink });
    this.o.log.fault(message, fields);
  }

  /** A batch was delivered. */
  delivered(): void {
    this.lastError = undefined;
    this.failingSinceMs = undefined;
  }

  /** A batch was dead-lettered: the sink answered, and delivery moved on. */
  movedOn(): void {
    this.failingSinceMs = undefined;
  }

  /** A batch was settled (its acknowledgement committed): the loop works again. */
  settled(): void {
    this.#crashes = 0;
  }

  /** The loop failed with `err`: records the fault, returns the pause before it starts again. */
  crashed(err: unknown, baseMs: number, maxMs: number): number {
    this.#crashes++;
    const delay = Math.max(baseMs, backoffDelay(this.#crashes, baseMs, maxMs));
    this.fault(`delivery loop of sink ${this.o.sink} failed: ${describeError(err)}; it starts again from the cursor`, { err, restartInMs: delay });
    return delay;
  }
}

/**
 * Runs `loop` until it returns or `signal` aborts. After a state error, waits what
 * `onStateError` says; after any other error, what `onCrash` says; then runs it again.
 */
export async function superviseLoop(
  loop: () => Promise<void>,
  signal: AbortSignal,
  onStateError: (err: Error & { code: string }) => number,
  onCrash: (err: unknown) => number,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await retryOnStateErrors(loop, onStateError, signal);
      return;
    } catch (err) {
      if (signal.aborted) return;
      await sleep(onCrash(err), signal);
    }
  }
}
