//! Timestamps as the simulated service writes and reads them: entry times with 0–9
//! fractional digits, request bounds with exactly three.

/** The only form accepted for `time_from` / `time_to`. */
export const REQUEST_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ENTRY_TIME_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;

/**
 * Parses a request bound (`2024-05-01T10:00:00.000Z`) into epoch ms, or `undefined`
 * when the text is not in that exact form or names an impossible date.
 */
export function parseRequestTime(text: string): number | undefined {
  if (!REQUEST_TIME_RE.test(text)) return undefined;
  const ms = Date.parse(text);
  // Date.parse rolls some impossible dates over; the round trip catches them.
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== text) return undefined;
  return ms;
}

/** Parses an entry time with 0–9 fractional digits into whole ms and the sub-ms nanoseconds. */
export function parseEntryTime(text: string): { ms: number; ns: number } | undefined {
  const m = ENTRY_TIME_RE.exec(text);
  if (!m) return undefined;
  const base = Date.parse(`${m[1]}Z`);
  if (!Number.isFinite(base) || new Date(base).toISOString().slice(0, 19) !== m[1]) return undefined;
  const frac = (m[2] ?? '').padEnd(9, '0');
  return { ms: base + Number(frac.slice(0, 3)), ns: Number(frac.slice(3)) };
}

/** Formats a time with `digits` fractional digits (0–9); the time must already be truncated to them. */
export function formatEntryTime(ms: number, ns: number, digits: number): string {
  const iso = new Date(ms).toISOString();
  if (digits === 0) return `${iso.slice(0, 19)}Z`;
  return `${iso.slice(0, 20)}${(iso.slice(20, 23) + String(ns).padStart(6, '0')).slice(0, digits)}Z`;
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
