//! What the two body scanners, the WebAssembly kernel (kernel/page-kernel.ts) and the
//! JavaScript scanner (js-scanner.ts), make of a *get model logs* body: each entry's `time`,
//! `stream` and `log` strings as byte ranges of the body, found without building an object
//! per entry. Both accept only bodies that `JSON.parse` accepts and the full validation
//! (json.ts) would pass, and report the same values; anything else they pass on.
//!
//! Each string is classified so the hot path can use its bytes as they are:
//! - `PLAIN`: printable ASCII without escapes. The bytes are the value, and they are also
//!   what `JSON.stringify` writes between the quotes.
//! - `ESCAPED`: ASCII with only the escapes `JSON.stringify` itself writes (`\"`, `\\`, `\b`,
//!   `\f`, `\n`, `\r`, `\t`). The bytes are the canonical JSON text; the value needs decoding.
//! - `OTHER`: anything else (non-ASCII bytes, `\u` escapes, `\/`): decode with `JSON.parse`.

/**
 * A reader's answer for a page that is not for it: the next path in the order takes the
 * page (see index.ts). The kernel gives it for a page it cannot take (too large, a call
 * that failed), both scanners for a body they leave to `JSON.parse`.
 */
export const NOT_THIS_PATH = Symbol('not this path');
export type NotThisPath = typeof NOT_THIS_PATH;

/** Kinds of a scanned string; see the module comment. */
export const PLAIN = 0;
export const ESCAPED = 1;
export const OTHER = 2;
export type StringKind = typeof PLAIN | typeof ESCAPED | typeof OTHER;

/** Fields of an entry, in the order of their spans. */
export const TIME = 0;
export const STREAM = 1;
export const LOG = 2;

/** The entries of a logs body, as byte ranges of the body. */
export interface Scan {
  /** The response body the spans point into. */
  readonly body: Buffer;
  readonly count: number;
  /**
   * Per entry, the [start, end) byte offsets of the contents (between the quotes) of its
   * `time`, `stream` and `log` strings: six numbers per entry, at `6 * i`.
   */
  readonly spans: Uint32Array;
  /** Per entry, the {@link StringKind} of `time`, `stream` and `log`: three per entry, at `3 * i`. */
  readonly kinds: Uint8Array;
  /** `undefined` when the service signalled the end (`next_token` absent, `null` or `""`). */
  readonly nextToken: string | undefined;
}

/** The value of a scanned string whose contents are `body[start, end)`. */
export function decodeString(body: Buffer, start: number, end: number, kind: StringKind): string {
  if (kind === PLAIN) return body.toString('latin1', start, end);
  return JSON.parse(body.toString(kind === ESCAPED ? 'latin1' : 'utf8', start - 1, end + 1)) as string;
}

/** The `next_token` whose contents are `body[start, end)`; `undefined` for `""`, which signals the end. */
export function tokenValue(body: Buffer, start: number, end: number, kind: StringKind): string | undefined {
  const value = decodeString(body, start, end, kind);
  return value === '' ? undefined : value;
}

/** Decodes the string of field `field` of entry `i` to its value. */
export function scannedString(scan: Scan, i: number, field: number): string {
  return decodeString(scan.body, scan.spans[6 * i + 2 * field]!, scan.spans[6 * i + 2 * field + 1]!, scan.kinds[3 * i + field] as StringKind);
}
