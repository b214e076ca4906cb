//! The proleptic Gregorian calendar in whole days since 1970-01-01, and the range of times
//! (the years 0000–9999) that the fixed-width canonical form holds.

export const NS_PER_SECOND = 1_000_000_000n;
export const NS_PER_MS = 1_000_000n;
export const SECONDS_PER_DAY = 86_400;

/** Seconds of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the canonical form's range. */
export const MIN_SECONDS = daysFromCivil(0, 1, 1) * SECONDS_PER_DAY;
export const MAX_SECONDS_EXCLUSIVE = daysFromCivil(10_000, 1, 1) * SECONDS_PER_DAY;

/** Days since 1970-01-01 of a proleptic Gregorian date (`setUTCFullYear` maps no two-digit year to the 1900s). */
export function daysFromCivil(year: number, month: number, day: number): number {
  return new Date(0).setUTCFullYear(year, month - 1, day) / 86_400_000;
}

/** Days in a month of a proleptic Gregorian year: the day before the first of the next month. */
export function daysInMonth(year: number, month: number): number {
  return new Date(new Date(0).setUTCFullYear(year, month, 0)).getUTCDate();
}
