//! The records that travel from the service to the sinks: a log entry as the service sends
//! it, an entry as the journal hands it to sinks, and a run of entries as NDJSON text. The
//! api client, the journal and the sinks all speak these; this module imports nothing.

/** One log entry exactly as the service returns it (element of `details`). */
export interface LogEntry {
  /** ISO 8601 UTC timestamp with 0–9 fractional digits, as sent by the service. */
  time: string;
  /** The log line. May be empty, multi-line or long. */
  log: string;
  /** `stdout` or `stderr` (other values are passed through unchanged). */
  stream: string;
}

/** One journal entry as handed to sinks. */
export interface SinkEntry {
  /** Journal sequence number; strictly increasing. */
  seq: number;
  modelId: string;
  /** The service's timestamp string, unchanged. */
  time: string;
  /** Exact timestamp in nanoseconds since the epoch. */
  timeNs: bigint;
  stream: string;
  log: string;
  /** When the daemon fetched the entry, epoch ms. */
  fetchedAtMs: number;
}

/**
 * Consecutive entries of one model as NDJSON text: the lines {@link SinkEntry} renders to
 * in sinks that write text (see `entryToNdjson`), ready to write as they are.
 */
export interface NdjsonChunk {
  modelId: string;
  /** Seq of the first line; line `i` is seq `firstSeq + i`. */
  firstSeq: number;
  /** One line per entry, UTF-8, each ending in `\n`; no line holds a raw newline. */
  bytes: Buffer;
  /** Exact time of each line's entry, nanoseconds since the epoch (its length is the line count). */
  timesNs: BigInt64Array;
}
