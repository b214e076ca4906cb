//! Wire types of the model-management service and the client interface the rest of
//! the daemon depends on, the page of logs included. Imports nothing of the page reader
//! (api/page/), which implements {@link ParsedPage}.
import type { LogEntry } from '../records/entry.js';

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

/** A field of an entry. */
export type EntryField = 'time' | 'stream' | 'log';

/**
 * One validated page of logs, whichever reader read it (api/page/). The per-entry work is
 * done in one call per page ({@link keys}, {@link render}); the calls per entry are for the
 * rare entries that need them.
 */
export interface ParsedPage {
  readonly count: number;
  /** Token for the next page; `undefined` when the service signalled the end (absent, null or ""). */
  readonly nextToken: string | undefined;
  /** The entries as objects (for a scanned page, built on first use); an off-spec one with its fields as text. */
  readonly entries: LogEntry[];
  /**
   * Writes each entry's exact time (ns since the epoch) to `timesNs` and its content hash
   * (dedupe/key.ts `contentHash` of its stream and log) to `hashes`.
   * @returns per entry, the code of why it is off the spec (0: on the spec, see
   * records/off-spec.ts), or `undefined` when every entry is on it. The slots of an entry
   * without a time (`untimed`) are left as they were.
   */
  keys(timesNs: BigInt64Array, hashes: Float64Array): Uint8Array | undefined;
  /** The value of a field of entry `i`. */
  text(i: number, field: EntryField): string;
  /** The NDJSON lines (records/ndjson.ts) of the entries at `kept[0..n)`, in that order, UTF-8. */
  render(modelId: string, kept: Uint32Array, n: number): Buffer;
}

/** A page of logs as the client returns it. */
export interface LogsPage extends ParsedPage {
  /** HTTP status and timing, for metrics. */
  httpStatus: number;
  latencyMs: number;
  /** Size of the response body in bytes. */
  bytes: number;
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
