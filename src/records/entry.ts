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

/** A record's severity, as the sinks name it (processing detects it from the text). */
export type RecordLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * The exception a Python traceback record shows (OpenTelemetry's `exception.*`): the one
 * printed last, which is the one that was raised.
 */
export interface RecordException {
  /** As printed: `torch.OutOfMemoryError`, `json.decoder.JSONDecodeError`, `KeyError`. */
  type: string;
  /** The text after `: ` on its line, with the lines that carry it on; absent when it has none. */
  message?: string;
  /** The types of the exceptions chained before it, oldest first; absent when there are none. */
  chain?: string[];
}

/**
 * What processing adds to a record (see processing/): all absent on an entry shipped raw,
 * and each absent when processing found nothing for it.
 */
export interface RecordFields {
  /** The level detected in the text. */
  level?: RecordLevel;
  /** The level as the line wrote it (`WARNING`, `E`, `40`…): OTLP's `severityText`. */
  levelText?: string;
  /** Lines in the record, when it holds several (a traceback): `log` is them joined by `\n`. */
  lines?: number;
  /** The last line's time string, for a record of several lines. */
  timeEnd?: string;
  /** The exception of a record holding a Python traceback. */
  exception?: RecordException;
  /** A JSON line's message (`message`, `msg` or `event`). */
  message?: string;
  /** A JSON line's other fields, with their JSON types. */
  attributes?: Record<string, unknown>;
  traceId?: string;
  spanId?: string;
}

/**
 * One journal entry as handed to sinks, or with processing one record: a single entry, or
 * the entries of one multiline group (then `seq` and `time` are its first line's).
 */
export interface SinkEntry extends RecordFields {
  /** Journal sequence number (of the first line); strictly increasing for raw entries. */
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
 * Consecutive entries (or records) of one model as NDJSON text: the lines {@link SinkEntry}
 * renders to in sinks that write text (see `entryToNdjson`), ready to write as they are.
 */
export interface NdjsonChunk {
  modelId: string;
  /** Seq of the first line; line `i` is seq `firstSeq + i`. */
  firstSeq: number;
  /** One line per entry, UTF-8, each ending in `\n`; no line holds a raw newline. */
  bytes: Buffer;
  /** Exact time of each line's entry, nanoseconds since the epoch (its length is the line count). */
  timesNs: BigInt64Array;
  /**
   * The lines are processed records, not one per seq: line `i` is not seq `firstSeq + i`
   * (`firstSeq` is the first record's first line), and all of them are new to the sink.
   */
  records?: true;
}

/**
 * The record as plain text: without the fields processing read out of a JSON line
 * (`message`, `attributes`, `trace_id`, `span_id`), which are what an encoder can fail on.
 * What a sink ships when it cannot encode a record whole.
 */
export function plainRecord(e: SinkEntry): SinkEntry {
  const { message: _message, attributes: _attributes, traceId: _traceId, spanId: _spanId, ...plain } = e;
  return plain;
}
