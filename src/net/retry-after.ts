//! `Retry-After` (RFC 9110 §10.2.3), for the service client and the network sinks alike.

/**
 * Parses a `Retry-After` header into a wait in milliseconds from `nowMs`: either
 * delay-seconds (`120`, digits only) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`). A
 * date in the past gives 0. Returns `undefined` when the header is absent or unreadable
 * (`1.5` is neither form), so the caller falls back to its own backoff.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  // HTTP dates always name a weekday and GMT; requiring a letter keeps odd numbers like "1.5" out.
  if (!/^[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
