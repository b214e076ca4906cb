//! HTTP's `token` (RFC 9110 §5.6.2): what a field name or a method may be. One definition
//! for the config's header names, the requests the service client writes and the answers
//! it reads.

/** A whole string that is an HTTP token. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The token characters, by char code (ASCII only): derived from {@link HTTP_TOKEN}, its one definition. */
const TOKEN_CHAR = Uint8Array.from({ length: 128 }, (_, c) => (HTTP_TOKEN.test(String.fromCharCode(c)) ? 1 : 0));

/**
 * Whether `text` from `from` to `to` (exclusive) is an HTTP token: what {@link HTTP_TOKEN}
 * answers for that slice, without making it (a response head's field names, at every request).
 */
export function isTokenRange(text: string, from: number, to: number): boolean {
  if (from >= to) return false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || TOKEN_CHAR[c] === 0) return false;
  }
  return true;
}
