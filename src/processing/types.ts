//! The vocabulary of the processing stages (levels, multiline groups, JSON lines, filters
//! and redaction): pure functions of the lines they are given, with no clock and no I/O, so
//! that the same journal always gives the same records.

import type { RecordLevel } from '../records/entry.js';

/** A record's severity, as the sinks name it. */
export type Level = RecordLevel;

/** Levels from the least to the most severe. */
export const LEVELS: readonly Level[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/** Each level's index in {@link LEVELS}. */
export const LEVEL_INDEX: Readonly<Record<Level, number>> = Object.freeze({ trace: 0, debug: 1, info: 2, warn: 3, error: 4, fatal: 5 });

/** A level found in a line, with the word as it was written (`WARNING`, `E`, `40`…). */
export interface DetectedLevel {
  level: Level;
  /** The level as the line wrote it; OTLP's `severityText`. */
  text: string;
}

/** One journal line as the stages see it. */
export interface ProcessLine {
  /** Journal sequence number. */
  seq: number;
  /** Exact time of the entry, nanoseconds since the epoch. */
  timeNs: bigint;
  /** The service's time string, unchanged. */
  time: string;
  stream: string;
  /** The text of the line. */
  log: string;
  /** When the line was fetched (epoch ms), passed through to its record; the stages never read it. */
  fetchedAtMs?: number;
}

/**
 * A page's lines read one after the other (in time order) without an object per line: the
 * stages read the stream and the start of each in the journal's bytes, and make the text,
 * or the whole line as an object, only for the lines that need it.
 */
export interface LineCursor {
  /** Moves to the next line; false past the last. */
  next(): boolean;
  /** The current line's index in its page. */
  readonly index: number;
  readonly timeNs: bigint;
  /** The page's times as 32-bit words (see time/ns-words.ts): the current line's is time `index`. */
  readonly timeWords: Int32Array;
  readonly stream: string;
  /** The text, as the journal holds it (before redaction); made when first read. */
  readonly log: string;
  /** The text in the journal's form (JSON-escaped UTF-8): bytes [logFrom, logTo); logFrom is -1 when not known. */
  readonly bytes: Uint8Array;
  readonly logFrom: number;
  readonly logTo: number;
  /** The current line as an object. */
  entry(): ProcessLine;
  /** Line `index` of the page (one already passed) as an object. */
  entryAt(index: number): ProcessLine;
}
