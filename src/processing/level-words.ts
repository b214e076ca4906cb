//! The words, letters and Python numbers that name a level, and each level's OTLP severity number.

import type { Level } from './types.js';

const WORDS: ReadonlyMap<string, Level> = new Map<string, Level>([
  ['TRACE', 'trace'],
  ['DEBUG', 'debug'],
  ['INFO', 'info'],
  ['NOTICE', 'info'],
  // loguru's level between INFO and WARNING.
  ['SUCCESS', 'info'],
  ['WARN', 'warn'],
  ['WARNING', 'warn'],
  ['ERROR', 'error'],
  ['ERR', 'error'],
  ['EXCEPTION', 'error'],
  ['CRITICAL', 'fatal'],
  ['FATAL', 'fatal'],
  ['PANIC', 'fatal'],
]);

/** The words of {@link levelFromWord}, longest first where one is the prefix of another (for regex alternations). */
export const LEVEL_WORDS: readonly string[] = [...WORDS.keys()].sort((a, b) => b.length - a.length);

/**
 * The level a word names, in any case: `TRACE`; `DEBUG`; `INFO`, `NOTICE`, `SUCCESS` (loguru);
 * `WARN`, `WARNING`; `ERROR`, `ERR`, `EXCEPTION`; `CRITICAL`, `FATAL`, `PANIC`. Otherwise `undefined`.
 */
export function levelFromWord(word: string): Level | undefined {
  return WORDS.get(word.toUpperCase());
}

const LETTERS: ReadonlyMap<string, Level> = new Map<string, Level>([
  ['D', 'debug'],
  ['I', 'info'],
  ['W', 'warn'],
  ['E', 'error'],
  ['F', 'fatal'],
  ['C', 'fatal'],
]);

/** The level of a one-letter code (glog, absl, torch's C++ logs, tornado): `D I W E F C`. */
export function levelFromLetter(letter: string): Level | undefined {
  return LETTERS.get(letter);
}

/**
 * The level of a Python `logging` number: 10 debug, 20 info, 30 warn, 40 error, 50 fatal, the
 * custom levels in between rounded down (25 is info), 1–9 trace. 0 (`NOTSET`), negative and
 * non-finite numbers have none. These are Python's numbers, not OTLP severity numbers.
 */
export function levelFromPythonNumber(n: number): Level | undefined {
  if (!Number.isFinite(n) || n < 1) return undefined;
  if (n < 10) return 'trace';
  if (n < 20) return 'debug';
  if (n < 30) return 'info';
  if (n < 40) return 'warn';
  if (n < 50) return 'error';
  return 'fatal';
}

const SEVERITY_NUMBERS: Readonly<Record<Level, number>> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 };

/** OTLP's `severityNumber` of a level: trace 1, debug 5, info 9, warn 13, error 17, fatal 21. */
export function severityNumber(level: Level): number {
  return SEVERITY_NUMBERS[level];
}
