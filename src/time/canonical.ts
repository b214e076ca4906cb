//! The canonical form of a time, `YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ` (30 characters, UTC, nine
//! fractional digits, sorting lexicographically in time order), and the millisecond form of
//! the times sent in requests.
import { MAX_SECONDS_EXCLUSIVE, MIN_SECONDS, NS_PER_SECOND } from './calendar.js';

/** Nine zeros: the fraction of a whole second, and the padding of a shorter one. */
export const FRACTION_PAD = '000000000';

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

/** `YYYY-MM-DDThh:mm:ss.<fraction>Z` from whole epoch seconds in the years 0000–9999. */
export function canonicalFromParts(secs: number, fraction: string): string {
  return `${new Date(secs * 1000).toISOString().slice(0, 19)}.${fraction}Z`;
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
  return new Date(whole).toISOString();
}
