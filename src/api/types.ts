//! Wire types of the model-management service and the client interface the rest of
//! the daemon depends on.
import type { ScannedLogs } from './logs-scan.js';

/** One log entry exactly as the service returns it (element of `details`). */
export interface LogEntry {
  /** ISO 8601 UTC timestamp with 0–9 fractional digits, as sent by the service. */
  time: string;
  /** The log line. May be empty, multi-line or long. */
  log: string;
  /** `stdout` or `stderr` (other values are passed through unchanged). */
  stream: string;
}

/** Request of the *get model logs* operation. Times are epoch milliseconds. */
export interface LogsRequest {
  modelId: string;
  /** Start of the window (inclusive), epoch ms; sent with exactly three fractional digits. */
  fromMs: number;
  /** End of the window, epoch ms. */
  toMs: number;
  isLessLogs?: boolean;
  /** Token of the previous page; absent for the first page. */
  nextToken?: string;
}

/** One validated page of logs. */
export interface LogsPage {
  /** The entries (for a scanned page, decoded from `scanned` on first use). */
  entries: LogEntry[];
  /** The entries as byte ranges of the response body, when the body scanner could read it. */
  scanned?: ScannedLogs | undefined;
  /** Token for the next page; `undefined` when the service signalled the end (absent, null or ""). */
  nextToken: string | undefined;
  /** HTTP status and timing, for metrics. */
  httpStatus: number;
  latencyMs: number;
  /** Size of the response body in bytes. */
  bytes: number;
  /**
   * Gives the response body's buffer back to the client for the next response (see
   * api/body-pool.ts). Call it once the page is no longer needed (committed or dropped);
   * afterwards neither `scanned` nor, unless read before, `entries` may be used. A page
   * never released is simply garbage-collected.
   */
  release?(): void;
}

/** The `data` object of *update model settings*; only the fields present are sent. */
export interface ModelSettings {
  min_replica?: number;
  max_replica?: number;
  scale_down_delay?: number;
  inference_time?: number;
  is_dedicated?: boolean;
  machine_type?: string;
  container_concurrency?: number;
  is_input_output_enabled?: boolean;
}

/** Result of a successful settings update. */
export interface SettingsResult {
  /** The service's human-readable confirmation. */
  details: string;
}

/** Observer of every HTTP attempt the client makes (metrics, logs). */
export interface ApiObserver {
  onAttempt?(info: { operation: 'logs' | 'settings'; modelId: string; status: number | 'error'; latencyMs: number; errorCode?: string }): void;
  onRetry?(info: { operation: 'logs' | 'settings'; modelId: string; attempt: number; delayMs: number; errorCode: string }): void;
}

/**
 * The service client. Both methods retry what is retryable (within their deadline)
 * and throw a typed `ApiError` subclass for everything else.
 */
export interface ApiClient {
  getLogs(req: LogsRequest, signal?: AbortSignal): Promise<LogsPage>;
  updateSettings(modelId: string, data: ModelSettings, signal?: AbortSignal): Promise<SettingsResult>;
  /** Changes the largest response body accepted, for the requests sent from now on (a reload). */
  setMaxResponseBytes?(bytes: number): void;
  close(): Promise<void>;
}
