//! How a model's polling stands: consecutive failures, a token refused, a pause for a page
//! over the size limit, the last error for status output, and the retry delay each failure
//! earns. The poller reports what happened; this decides the delays and what is said.
import type { Logger } from 'pino';
import { ApiAuthError, ApiClientError, ApiError } from '../api/errors.js';
import { describeError } from '../errors.js';
import type { Metrics, ModelCounters } from '../telemetry/metrics.js';
import { backoffDelay } from '../time/backoff.js';

/** What {@link ModelHealth} reports to. */
export interface ModelHealthDeps {
  modelId: string;
  metrics: Metrics;
  counters: ModelCounters;
  logger: Logger;
  /** Epoch ms. */
  now(): number;
  /** First delay after the service refused the token (`poll.auth_retry`). */
  authRetryMs: number;
}

/** The health of one model's polling. */
export class ModelHealth {
  /** Last error, for status output. */
  lastError: { code: string; message: string; atMs: number } | undefined;
  private failures = 0;
  private authFailures = 0;
  private pausedOversized = false;

  constructor(private readonly d: ModelHealthDeps) {}

  /** Whether the model's checkpoint has stopped moving: the token was refused, or a page is over the size limit. */
  get stopped(): boolean {
    return this.authFailures > 0 || this.pausedOversized;
  }

  /** A window was fetched to its end: the failures of the fetch before are behind. */
  polled(): void {
    this.failures = 0;
  }

  /** A page was committed: the model polls normally again. */
  recovered(): void {
    if (this.authFailures > 0 || this.failures > 0 || this.pausedOversized) {
      this.d.logger.info({ model: this.d.modelId }, 'model polling recovered');
      this.d.counters.up.set(1);
    }
    this.failures = 0;
    this.authFailures = 0;
    this.pausedOversized = false;
    this.lastError = undefined;
  }

  /** Polling pauses on a page over the size limit (`message` says why). */
  oversized(code: string, message: string): void {
    this.lastError = { code, message, atMs: this.d.now() };
    this.pausedOversized = true;
  }

  /** A state write failed (the retry delay is the caller's). */
  stateError(err: unknown): void {
    this.d.metrics.pollErrors.inc({ model: this.d.modelId, code: 'MLS_ERR_STATE_WRITE' });
    this.lastError = { code: 'MLS_ERR_STATE_WRITE', message: describeError(err), atMs: this.d.now() };
  }

  /** A fetch failed after the client's retries: counts and says it; returns the delay before trying again. */
  fetchError(err: unknown): number {
    const { modelId, logger, metrics } = this.d;
    const code = err instanceof ApiError ? err.code : 'MLS_ERR_UNKNOWN';
    metrics.pollErrors.inc({ model: modelId, code });
    this.lastError = { code, message: describeError(err), atMs: this.d.now() };
    if (err instanceof ApiAuthError) {
      const delay = Math.min(this.d.authRetryMs * 2 ** Math.min(this.authFailures, 10), Math.max(600_000, this.d.authRetryMs));
      this.authFailures++;
      this.d.counters.up.set(0);
      logger.error({ model: modelId, status: err.status, retryInMs: delay }, 'the service refused the API token; polling of this model is paused until it is accepted (check api.token)');
      return delay;
    }
    this.failures++;
    const delay = backoffDelay(this.failures, 1_000, 60_000);
    if (err instanceof ApiClientError) {
      this.d.counters.up.set(0);
      logger.error({ model: modelId, status: err.status, err: describeError(err), retryInMs: delay }, 'the service rejected the logs request');
    } else if (this.failures === 1 || this.failures % 10 === 0) {
      logger.warn({ model: modelId, code, err: describeError(err), failures: this.failures, retryInMs: delay }, 'fetching logs failed; will retry');
    }
    return Math.max(delay, 250);
  }
}
