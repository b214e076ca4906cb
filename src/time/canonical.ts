//! The canonical form of a time, `YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ` (30 characters, UTC, nine
//! fractional digits, sorting lexicographically in time order), and the millisecond form of
//! the times sent in requests.
import { MAX_SECONDS_EXCLUSIVE, MIN_SECONDS, NS_PER_SECOND, SECONDS_PER_DAY, civilFromDays } from './calendar.js';

/** Nine zeros: the fraction of a whole second, and the padding of a shorter one. */
export const FRACTION_PAD = '000000000';

/** Two digits of 0–59, made once (a request formats six: two times of three fields). */
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));

/** `n` (0–59: a month, day, hour, minute or second) in two digits. */
function pad2(n: number): string {
  return TWO_DIGITS[n]!;
}

/**
 * Formats nanoseconds since the epoch as the canonical 30-character UTC form.
 * @throws RangeError outside the years 0000–9999, which the fixed width cannot hold.
 */
export function canonicalFromNs(ns: bigint): string {
  let seconds = ns / NS_PER_SECOND;
  let fraction = ns - seconds * NS_PER_SECOND;
  if (fraction < 0n) {
    fraction += NS_PER_SECOND;
    seconds -= 1n;
  }
  const secs = Number(seconds);
  if (secs < MIN_SECONDS || secs >= MAX_SECONDS_EXCLUSIVE) throw new RangeError(`time ${ns}ns is outside the years 0000–9999`);
  const frac = String(fraction);
  return canonicalFromParts(secs, FRACTION_PAD.slice(frac.length) + frac);
}

/**
 * `YYYY-MM-DDThh:mm:ss.<fraction>Z` from whole epoch seconds (in range): the canonical form
 * with nine fractional digits, a request time with three.
 */
export function canonicalFromParts(secs: number, fraction: string): string {
  const days = Math.floor(secs / SECONDS_PER_DAY);
  const sod = secs - days * SECONDS_PER_DAY;
  return `${dayPrefix(days)}${pad2(Math.floor(sod / 3600))}:${pad2(Math.floor(sod / 60) % 60)}:${pad2(sod % 60)}.${fraction}Z`;
}

/** The day last formatted (days since the epoch) and its `YYYY-MM-DDT`: times come a day at a time. */
let lastDay = Number.NaN;
let lastDayPrefix = '';

/** `YYYY-MM-DDT` of a day since the epoch. */
function dayPrefix(days: number): string {
  if (days !== lastDay) {
    const [year, month, day] = civilFromDays(days);
    lastDay = days;
    lastDayPrefix = `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T`;
  }
  return lastDayPrefix;
}

/**
 * Formats epoch milliseconds for a request: ISO 8601 UTC with exactly three fractional
 * digits and a trailing `Z`, e.g. `2024-05-01T12:00:00.000Z`. A fractional input is
 * truncated toward the earlier millisecond.
 * @throws RangeError for a value that is not a finite time in the years 0000–9999.
 */
export function formatRequestTime(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`request time must be finite, got ${ms}`);
  const whole = Math.floor(ms);
  if (whole < MIN_SECONDS * 1000 || whole >= MAX_SECONDS_EXCLUSIVE * 1000) throw new RangeError(`request time ${ms} is outside the years 0000–9999`);
  // Two a request: from the day's cached prefix and digit tables (far cheaper than
  // Date#toISOString, which makes a Date and formats every field each time).
  const secs = Math.floor(whole / 1000);
  return canonicalFromParts(secs, THREE_DIGITS[whole - secs * 1000]!);
}

const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
