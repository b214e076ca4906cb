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
