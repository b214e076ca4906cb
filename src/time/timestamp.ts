//! Timestamps of log entries, exact to the nanosecond: parsing the service's ISO 8601
//! strings (0–9 fractional digits, `Z` or a numeric offset) into bigint nanoseconds and a
//! fixed-width canonical form that sorts lexicographically in time order, and formatting
//! the millisecond times sent in requests.
//!
//! Parsing is on the hot path of every page, so it reads character codes directly:
//! no regular expression, no `Date.parse`, no float on the way to the nanoseconds.

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

const NS_PER_SECOND = 1_000_000_000n;
const NS_PER_MS = 1_000_000n;
const SECONDS_PER_DAY = 86_400;
const FRACTION_PAD = '000000000';
/** Seconds of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the canonical form's range. */
const MIN_SECONDS = daysFromCivil(0, 1, 1) * SECONDS_PER_DAY;
const MAX_SECONDS_EXCLUSIVE = daysFromCivil(10_000, 1, 1) * SECONDS_PER_DAY;

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
 * Exact integer arithmetic on small numbers, so doubles are fine here.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function civilFromDays(days: number): [year: number, month: number, day: number] {
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

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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

/** Loads `bytes[start, end)` (ASCII) for {@link scan}; returns its length. */
function loadBytes(bytes: Uint8Array, start: number, end: number): number {
  const len = end - start;
  const n = len < 40 ? len : 40;
  for (let i = 0; i < n; i++) CODES[i] = bytes[start + i]!;
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

/**
 * {@link entryTimeNs} of the ASCII time text `bytes[start, end)`, written as the two
 * 32-bit halves of its int64 (low word first, as a BigInt64Array holds it) at
 * `out[at]`, `out[at + 1]`: no string and no bigint per entry. Returns false, writing
 * nothing, when the text is not a valid entry time.
 */
export function writeEntryTimeNs(bytes: Uint8Array, start: number, end: number, out: Uint32Array, at: number): boolean {
  if (scan(loadBytes(bytes, start, end)) !== undefined) return false;
  // ns = seconds·10^9 + scaled, taken modulo 2^64 as a BigInt64Array stores it, from
  // products below 2^53: seconds = sh·2^20 + sl, and sh·10^9 = bh·2^12 + bl.
  const sh = Math.floor(scanSeconds / 1_048_576);
  const sl = scanSeconds - sh * 1_048_576;
  const a = sl * 1e9 + scanScaled;
  const aHi = Math.floor(a / 4_294_967_296);
  const b = sh * 1e9;
  const bh = Math.floor(b / 4096);
  const lo = a - aHi * 4_294_967_296 + (b - bh * 4096) * 1_048_576;
  const carry = lo >= 4_294_967_296 ? 1 : 0;
  out[at] = lo - carry * 4_294_967_296;
  out[at + 1] = aHi + bh + carry;
  return true;
}

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
function canonicalFromParts(secs: number, fraction: string): string {
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
  // Two a request: from the day's cached prefix and digit tables (a tenth of the time of
  // Date#toISOString, which makes a Date and formats every field each time).
  const secs = Math.floor(whole / 1000);
  return canonicalFromParts(secs, THREE_DIGITS[whole - secs * 1000]!);
}

const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

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
