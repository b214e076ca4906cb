//! Timestamps as the simulated service writes and reads them: entry times with 0–9
//! fractional digits, request bounds with exactly three.

/**
 * Parses a request bound (`2024-05-01T10:00:00.000Z`) into epoch ms, or `undefined`
 * when the text is not in that exact form or names an impossible date.
 */
export function parseRequestTime(text: string): number | undefined {
  const ms = Date.parse(text);
  // Only that form (or a year beyond 9999, 27 characters) comes back from the round trip:
  // Date.parse takes others, and rolls some impossible dates over.
  return Number.isFinite(ms) && text.length === 24 && new Date(ms).toISOString() === text ? ms : undefined;
}

// Entries are rendered mostly in time order, so the date-and-seconds part repeats (and
// toISOString costs ten times what the rest of the formatting does).
let cachedSecond = NaN;
let cachedPrefix = '';

/** Formats a time with `digits` fractional digits (0–9); the time must already be truncated to them. */
export function formatEntryTime(ms: number, ns: number, digits: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19);
  }
  if (digits === 0) return `${cachedPrefix}Z`;
  const frac = String(ms - second * 1000).padStart(3, '0') + String(ns).padStart(6, '0');
  return `${cachedPrefix}.${digits === 9 ? frac : frac.slice(0, digits)}Z`;
}

/** Truncates (ms, ns) to `digits` fractional digits of a second. */
export function truncateTime(ms: number, ns: number, digits: number): { ms: number; ns: number } {
  if (digits >= 9) return { ms, ns };
  if (digits >= 3) {
    const step = 10 ** (9 - digits);
    return { ms, ns: ns - (ns % step) };
  }
  const step = 10 ** (3 - digits);
  return { ms: ms - (((ms % step) + step) % step), ns: 0 };
}
