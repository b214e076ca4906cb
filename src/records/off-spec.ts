//! Entries off the spec: why an entry is, as the page readers mark it (api/page/), the
//! journal counts it and the metrics name it.

/**
 * Why an entry is off the spec, in the order they are checked: an entry is counted under the
 * first that applies. In a page's codes, 0 is an entry on the spec and `k` the reason at
 * `k - 1`. Such an entry is kept, its fields as text (api/page/json.ts):
 * - `not_an_object`: the element of `details` is not a JSON object;
 * - `time_unparsable`: `time` is missing, not a string, or not an ISO 8601 time;
 * - `stream_not_string`: `stream` is missing or not a string;
 * - `log_not_string`: `log` is missing or not a string.
 */
export const INVALID_REASONS = ['not_an_object', 'time_unparsable', 'stream_not_string', 'log_not_string'] as const;
export type InvalidReason = (typeof INVALID_REASONS)[number];
/** Codes of {@link INVALID_REASONS}. The first two are those of an entry without a time, keyed by its text (dedupe/buckets.ts). */
export const NOT_AN_OBJECT = 1;
export const TIME_UNPARSABLE = 2;
export const STREAM_NOT_STRING = 3;
export const LOG_NOT_STRING = 4;

/** Whether an entry with the code `code` has no time of its own: it is keyed by its text. */
export function untimed(code: number): boolean {
  return code === NOT_AN_OBJECT || code === TIME_UNPARSABLE;
}
