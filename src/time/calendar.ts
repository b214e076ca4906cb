//! The proleptic Gregorian calendar in whole days since 1970-01-01, and the range of times
//! (the years 0000–9999) that the fixed-width canonical form holds.

export const NS_PER_SECOND = 1_000_000_000n;
export const NS_PER_MS = 1_000_000n;
export const SECONDS_PER_DAY = 86_400;

/** Seconds of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the canonical form's range. */
export const MIN_SECONDS = daysFromCivil(0, 1, 1) * SECONDS_PER_DAY;
export const MAX_SECONDS_EXCLUSIVE = daysFromCivil(10_000, 1, 1) * SECONDS_PER_DAY;

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
 * Exact integer arithmetic on small numbers, so doubles are fine here.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

export function civilFromDays(days: number): [year: number, month: number, day: number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
