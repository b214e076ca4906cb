//! Timestamps of log entries, exact to the nanosecond: parsing the service's ISO 8601
//! strings (0–9 fractional digits, `Z` or a numeric offset) into bigint nanoseconds and the
//! fixed-width canonical form (canonical.ts), and converting between nanoseconds and the
//! milliseconds of requests.
//!
//! Parsing is on the hot path of every page, so it reads character codes directly:
//! no regular expression, no `Date.parse`, no float on the way to the nanoseconds.
import { FRACTION_PAD, canonicalFromParts } from './canonical.js';
import { MAX_SECONDS_EXCLUSIVE, MIN_SECONDS, NS_PER_MS, NS_PER_SECOND, SECONDS_PER_DAY, daysFromCivil, daysInMonth } from './calendar.js';

/** A successfully parsed entry time. */
export interface ParsedTime {
  ok: true;
  /** Nanoseconds since the Unix epoch, UTC. */
  ns: bigint;
  /** `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`: always 30 characters, UTC, nine fractional digits. */
  canonical: string;
}

/** Why a string is not a valid entry time. Parsing never throws. */
export interface TimeParseFailure {
  ok: false;
  reason: string;
}

// The character codes of the time being scanned. A valid time has at most 35 characters,
// and the checks never read past the 36th, so the first 40 are enough; the code after the
// last one is END, which no check accepts (as `charCodeAt` past the end gives NaN).
const CODES = new Uint16Array(41);
const END = 0xffff;

/** Loads a string's codes for {@link scan}; returns its length. */
function loadString(s: string): number {
  const len = s.length;
  const n = len < 40 ? len : 40;
  for (let i = 0; i < n; i++) CODES[i] = s.charCodeAt(i);
  CODES[n] = END;
  return len;
}

/** Value of the two ASCII digits at `i`, or -1 when either is not a digit. */
function two(i: number): number {
  const a = CODES[i]! - 48;
  const b = CODES[i + 1]! - 48;
  if (a < 0 || a > 9 || b < 0 || b > 9) return -1;
  return a * 10 + b;
}

function fail(reason: string): TimeParseFailure {
  return { ok: false, reason };
}

// Consecutive entries almost always share their date, so the last day number is reused.
let cachedDateKey = -1;
let cachedDays = 0;

/** Nanoseconds per unit of a fraction with 0–9 digits (a lookup: `10 **` is a call on the hot path). */
const SCALE = [0, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];

// Results of the last successful scan (see `scan`): the hot path reads them without
// allocating a result object.
let scanSeconds = 0;
let scanScaled = 0;
let scanFractionDigits = 0;
let scanOffsetSeconds = 0;

/**
 * Checks the entry time loaded in CODES (`len` characters long) and leaves its parts in
 * the `scan*` variables. Returns undefined when valid, else the reason it is not.
 */
function scan(len: number): string | undefined {
  if (len < 19) return 'too short for YYYY-MM-DDTHH:MM:SSZ';
  if (CODES[4] !== 45 || CODES[7] !== 45) return 'expected YYYY-MM-DD';
  if (CODES[10] !== 84) return "expected 'T' between date and time";
  if (CODES[13] !== 58 || CODES[16] !== 58) return 'expected HH:MM:SS';

  const yHi = two(0);
  const yLo = two(2);
  const month = two(5);
  const day = two(8);
  if (yHi < 0 || yLo < 0 || month < 0 || day < 0) return 'non-digit in the date';
  const year = yHi * 100 + yLo;
  const dateKey = (year * 100 + month) * 100 + day;
  let days: number;
  if (dateKey === cachedDateKey) {
    days = cachedDays;
  } else {
    if (month < 1 || month > 12) return `month ${month} does not exist`;
    if (day < 1 || day > daysInMonth(year, month)) return `day ${day} does not exist in ${String.fromCharCode(...CODES.subarray(0, 7))}`;
    days = daysFromCivil(year, month, day);
    cachedDateKey = dateKey;
    cachedDays = days;
  }

  const hour = two(11);
  const minute = two(14);
  const second = two(17);
  if (hour < 0 || minute < 0 || second < 0) return 'non-digit in the time of day';
  if (hour > 23) return `hour ${hour} does not exist`;
  if (minute > 59) return `minute ${minute} does not exist`;
  if (second > 59) return `second ${second} does not exist`;

  let i = 19;
  let fraction = 0;
  let fractionDigits = 0;
  if (CODES[i] === 46) {
    i++;
    const start = i;
    let c = CODES[i]! - 48;
    while (c >= 0 && c <= 9) {
      if (i - start === 9) return 'more than nine fractional digits';
      fraction = fraction * 10 + c;
      i++;
      c = CODES[i]! - 48;
    }
    fractionDigits = i - start;
    if (fractionDigits === 0) return "no digit after '.'";
  }

  let offsetSeconds = 0;
  const zone = CODES[i];
  if (zone === 90) {
    if (i + 1 !== len) return 'characters after the zone designator';
  } else if (zone === 43 || zone === 45) {
    if (i + 6 !== len || CODES[i + 3] !== 58) return 'expected a zone offset ±HH:MM';
    const oh = two(i + 1);
    const om = two(i + 4);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return 'invalid zone offset';
    offsetSeconds = (oh * 3600 + om * 60) * (zone === 45 ? -1 : 1);
  } else {
    return "expected 'Z' or a zone offset";
  }
  const seconds = days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offsetSeconds;
  if (offsetSeconds !== 0 && (seconds < MIN_SECONDS || seconds >= MAX_SECONDS_EXCLUSIVE)) return 'outside the years 0000–9999 once converted to UTC';
  scanSeconds = seconds;
  scanScaled = fraction * SCALE[fractionDigits]!;
  scanFractionDigits = fractionDigits;
  scanOffsetSeconds = offsetSeconds;
  return undefined;
}

/**
 * Parses an entry time `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)` exactly.
 * Offsets are converted to UTC. Anything else (more than nine fractional digits,
 * an impossible date such as month 13, February 30 or hour 24, a leap second, stray
 * characters) yields a failure value; this function never throws.
 */
export function parseEntryTime(s: string): ParsedTime | TimeParseFailure {
  if (typeof s !== 'string') return fail('not a string');
  const reason = scan(loadString(s));
  if (reason !== undefined) return fail(reason);
  const fractionDigits = scanFractionDigits;
  const padded = fractionDigits === 0 ? FRACTION_PAD : s.slice(20, 20 + fractionDigits) + FRACTION_PAD.slice(fractionDigits);
  const ns = BigInt(scanSeconds) * NS_PER_SECOND + BigInt(scanScaled);
  if (scanOffsetSeconds === 0) return { ok: true, ns, canonical: `${s.slice(0, 19)}.${padded}Z` };
  return { ok: true, ns, canonical: canonicalFromParts(scanSeconds, padded) };
}

/**
 * The time of an entry in nanoseconds since the epoch, or undefined when `s` is not a
 * valid entry time: {@link parseEntryTime} without the canonical string, for the hot path.
 */
export function entryTimeNs(s: string): bigint | undefined {
  if (typeof s !== 'string' || scan(loadString(s)) !== undefined) return undefined;
  return BigInt(scanSeconds) * NS_PER_SECOND + BigInt(scanScaled);
}

/** Nanoseconds to epoch milliseconds, rounded down (toward the earlier millisecond). */
export function nsToMs(ns: bigint): number {
  const q = ns / NS_PER_MS;
  return Number(ns < 0n && q * NS_PER_MS !== ns ? q - 1n : q);
}

/** Nanoseconds to epoch milliseconds, rounded up: the inclusive end of a request window. */
export function nsToMsCeil(ns: bigint): number {
  const q = ns / NS_PER_MS;
  return Number(ns > 0n && q * NS_PER_MS !== ns ? q + 1n : q);
}

/** Epoch milliseconds to nanoseconds. A fractional input is rounded down first. */
export function msToNs(ms: number): bigint {
  return BigInt(Math.floor(ms)) * NS_PER_MS;
}
