//! What a delivery loop says about a failing sink, rate-limited per sink: a sink that fails
//! on every batch logs at most one error line and one warning per 30 s, not one per
//! attempt. Each line carries `suppressed`, the lines held back since the last one of its
//! level (they go to debug). Errors (a fault of the sink, a batch dead-lettered) and
//! warnings (a retry, a failed replay) are limited apart, so a retry never hides a loss.
import type { Logger } from 'pino';
import { LogThrottle } from '../telemetry/log-throttle.js';

/** At most one line of each level per sink this often. */
export const FAILURE_LOG_INTERVAL_MS = 30_000;

/** The rate-limited failure lines of one sink's delivery loop. */
export class FailureLog {
  private readonly errors = new LogThrottle(FAILURE_LOG_INTERVAL_MS);
  private readonly warnings = new LogThrottle(FAILURE_LOG_INTERVAL_MS);

  constructor(private readonly o: { sink: string; logger: Logger; now(): number }) {}

  /** The sink broke its contract, or the loop failed; the batch is sent again. */
  fault(error: string, fields: Record<string, unknown> = {}): void {
    this.say('error', { ...fields, error }, 'sink fault; delivery goes on (see lastError in /status)');
  }

  /** The sink rejected a batch for good: it went to the dead-letter table. `entries`: journal entries, as `mls dlq list` counts them. */
  deadLettered(fields: { entries: number; firstSeq: number; lastSeq: number; error: string }): void {
    this.say('error', fields, "sink rejected a batch; moved to the dead-letter table (see 'mls dlq list')");
  }

  /** The sink could not encode one record: the rest of its batch was delivered, the record went to the dead-letter table alone. */
  setAside(fields: { entries: number; seq: number; error: string }): void {
    this.say('error', fields, "sink could not encode a record; moved it alone to the dead-letter table (see 'mls dlq list'), its batch delivered");
  }

  /** A send failed and will be retried. */
  retrying(fields: { attempts: number; retryInMs: number; error: string }): void {
    this.say('warn', fields, 'sink send failed; retrying');
  }

  /** A dead letter sent again failed again; it stays in the table. */
  replayFailed(fields: { deadLetter: number; error: string }): void {
    this.say('warn', fields, 'dead letter replay failed; it stays in the table');
  }

  private say(level: 'error' | 'warn', fields: Record<string, unknown>, msg: string): void {
    const { sink, logger } = this.o;
    const said = (level === 'error' ? this.errors : this.warnings).take(this.o.now());
    if (said) logger[level]({ sink, ...fields, suppressed: said.suppressed }, msg);
    else logger.debug({ sink, ...fields }, msg);
  }
}
