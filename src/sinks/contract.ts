//! The contract every sink implements, and the records it receives.
//!
//! A sink is built from its config by a factory, opened with the state it last
//! committed, then handed batches. Outcomes are values: the delivery loop owns
//! retries, backoff and dead-lettering; a sink throws only for bugs. The loop checks
//! every outcome (delivery/outcome-check.ts): a throw or a value outside these shapes
//! is retried, never taken as a delivery or a rejection.
import type { NdjsonChunk, SinkEntry } from '../records/entry.js';

// The records a sink receives have their home in records/; sink modules import them from here.
export type { NdjsonChunk, SinkEntry } from '../records/entry.js';

/** A batch: consecutive journal entries of one sink. */
export interface SinkBatch {
  /**
   * Stable identity of the batch (the webhook's Idempotency-Key): derived from the state
   * file's installation id, the sink name and the seq range, never random. The same after
   * retries and restarts; never shared by two installations.
   */
  id: string;
  firstSeq: number;
  lastSeq: number;
  /** The entries (for batches read from the journal, built on first access). */
  readonly entries: SinkEntry[];
  /**
   * The same entries as NDJSON lines, when the batch was read from the journal (which
   * stores them so). Sinks that write lines use them to skip rendering every entry again.
   */
  readonly ndjson?: readonly NdjsonChunk[];
  /** How many records (entries, for a sink shipping them raw) the batch holds, when known without building them. */
  readonly count?: number;
  /**
   * Sets aside one entry the sink cannot encode, even as plain text: the sink sends the
   * rest, and once the batch is acknowledged the entry is dead-lettered alone with `reason`.
   * Absent on a batch that cannot set entries aside (a dead letter sent again).
   */
  setAside?(entry: SinkEntry, reason: string): void;
}

/** What happened to a batch. */
export type SendOutcome =
  /** Delivered. `state`, if given, is committed atomically with the sink's cursor. */
  | { status: 'ok'; state?: string }
  /** Not delivered; try the same batch again (after `afterMs`, a finite number ≥ 0, capped at the sink's `retry.max_delay`, if given). */
  | { status: 'retry'; afterMs?: number; error: string }
  /** Not deliverable ever (e.g. HTTP 400): the batch goes to the dead-letter table. */
  | { status: 'reject'; error: string };

/** A running sink. */
export interface Sink {
  /**
   * Whether a batch re-sent after a crash must keep its identity (seq range, and so its
   * `id` / Idempotency-Key). Default true: the delivery loop durably records each batch's
   * range before sending it. A sink that makes replays harmless by itself (the file sink
   * truncates to its committed offset) sets false and saves that write.
   */
  readonly stableBatchIds?: boolean;
  /** Cheap check that the destination is reachable; informational only. */
  healthcheck(): Promise<{ ok: boolean; detail?: string }>;
  /**
   * Delivers one batch. Must not resolve `ok` before the data is acknowledged by the
   * destination. `signal` fires when the daemon stops, and for module sinks when the send
   * outlives the sink's `timeout`: the send then counts as a retry whether or not it ends.
   */
  send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome>;
  /** Makes everything sent so far durable or delivered (e.g. fsync). */
  flush(): Promise<void>;
  /** Releases resources. Idempotent: a second call returns the first call's promise. */
  close(): Promise<void>;
}

/** Logger passed to sinks (a pino child logger fits). */
export interface SinkLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What a factory receives besides the sink's own config block. */
export interface SinkContext {
  /** The sink's configured name (unique). */
  name: string;
  /** The state the sink last committed with its cursor (`undefined` on first start). */
  state: string | undefined;
  /** Epoch-ms clock. */
  now(): number;
  logger: SinkLogger;
  /**
   * Synchronously and durably stores the sink's state without moving its cursor (one
   * SQLite transaction); used e.g. to record a file before the first write to it, or a
   * rotation. Throws when the state could not be stored.
   */
  commitState?(state: string): void;
  /**
   * Counts bytes a sink found at its destination that its committed state does not account
   * for (a file sink's file written before its state began), in
   * `mls_file_sink_unknown_bytes_total`. Absent outside the daemon.
   */
  unknownBytes?(bytes: number): void;
  /**
   * True when the sink is built only to be asked for its `healthcheck()` and then closed
   * (`mls validate --check-sinks`): it must create, truncate, write and send nothing.
   * `state` is then undefined and `commitState` absent.
   */
  checkOnly?: boolean;
}

/**
 * Builds a sink from its config block. Custom sink modules (`type: module`) export
 * a function of this shape as their default export (or as `createSink`).
 */
export type SinkFactory = (config: Record<string, unknown>, context: SinkContext) => Promise<Sink> | Sink;
