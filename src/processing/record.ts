//! A record as the processing stages make it, and where the stages put their records.
import type { SinkEntry } from '../records/entry.js';
import type { Level } from './types.js';

/**
 * One record after processing. It is also the record as sinks receive it (a
 * {@link SinkEntry}: `seq` is its first line's, `modelId` the processor's).
 */
export interface ProcessedRecord extends SinkEntry {
  /** The first line's time string, unchanged, and its exact time. */
  time: string;
  timeNs: bigint;
  /** The last line's time string, for a record of several lines. */
  timeEnd?: string;
  stream: string;
  /** The text after redaction: the lines joined by `\n`; for a JSON line, the line as written. */
  log: string;
  /** How many lines the record holds, when more than one. */
  lines?: number;
  /** The detected level; absent when the text names none. */
  level?: Level;
  /** The level as the line wrote it (OTLP `severityText`). */
  levelText?: string;
  /** A JSON line's message (`message`, `msg` or `event`). */
  message?: string;
  /** A JSON line's other fields. */
  attributes?: Record<string, unknown>;
  traceId?: string;
  spanId?: string;
  /** Seqs of the record's first and last lines. */
  firstSeq: number;
  lastSeq: number;
}

/** Records that came out of a call, and how many records the filter dropped. */
export interface Processed {
  records: ProcessedRecord[];
  dropped: number;
}
