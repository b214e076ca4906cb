//! The fast reader of a *get model logs* body: finds each entry's `time`, `stream` and `log`
//! strings as byte ranges of the body, without building an object per entry. It accepts
//! only bodies that `JSON.parse` accepts and that json.ts reads with every entry's fields
//! strings, and reports the same values; any other body it leaves to json.ts (a key given
//! twice, an escaped key, an off-spec entry, a malformed body).
//!
//! Each string is classified so that the page can use its bytes as they are:
//! - `PLAIN`: printable ASCII without escapes. The bytes are the value, and they are also
//!   what `JSON.stringify` writes between the quotes.
//! - `ESCAPED`: ASCII with only the escapes `JSON.stringify` itself writes (`\"`, `\\`, `\b`,
//!   `\f`, `\n`, `\r`, `\t`). The bytes are the canonical JSON text; the value needs decoding.
//! - `OTHER`: anything else (non-ASCII bytes, `\u` escapes, `\/`): decode with `JSON.parse`.

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

/** Thrown inside the scanner for a body it leaves to json.ts. */
const LEAVE = Symbol('leave to json.ts');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Keys the scanner looks for, as bytes. */
const KEY_STATUS = Buffer.from('status');
const KEY_DETAILS = Buffer.from('details');
const KEY_NEXT_TOKEN = Buffer.from('next_token');
const KEY_TIME = Buffer.from('time');
const KEY_STREAM = Buffer.from('stream');
const KEY_LOG = Buffer.from('log');
const SUCCESS = Buffer.from('success');

class Scanner {
  pos = 0;
  /** Kind of the last string scanned. */
  kind: StringKind = PLAIN;
  /** End (exclusive) of the last string's contents. */
  end = 0;
  constructor(readonly b: Buffer) {}

  ws(): void {
    const b = this.b;
    let p = this.pos;
    for (;;) {
      const c = b[p];
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  expect(c: number): void {
    this.ws();
    if (this.b[this.pos] !== c) throw LEAVE;
    this.pos++;
  }

  /** After a member or an element: true at `close` (consumed), false at a comma (consumed). */
  closes(close: number): boolean {
    this.ws();
    const d = this.b[this.pos++];
    if (d === close) return true;
    if (d !== 0x2c) throw LEAVE;
    return false;
  }

  /** Scans a string at `pos` (after whitespace); returns the start of its contents. */
  string(): number {
    this.ws();
    const b = this.b;
    if (b[this.pos] !== QUOTE) throw LEAVE;
    const start = this.pos + 1;
    let p = start;
    let kind: StringKind = PLAIN;
    const n = b.length;
    for (;;) {
      if (p >= n) throw LEAVE;
      const c = b[p]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        const e = b[p + 1];
        if (e === 0x22 || e === 0x5c || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
          if (kind === PLAIN) kind = ESCAPED;
          p += 2;
        } else if (e === 0x2f) {
          kind = OTHER;
          p += 2;
        } else if (e === 0x75) {
          for (let k = 2; k < 6; k++) if (!isHex(b[p + k])) throw LEAVE;
          kind = OTHER;
          p += 6;
        } else {
          throw LEAVE;
        }
      } else if (c < 0x20) {
        throw LEAVE; // raw control characters are not valid JSON
      } else {
        if (c >= 0x80) kind = OTHER;
        p++;
      }
    }
    this.kind = kind;
    this.end = p;
    this.pos = p + 1;
    return start;
  }

  /** Whether the last string scanned (contents [start, end)) is exactly `key`, unescaped. */
  is(start: number, key: Buffer): boolean {
    if (this.kind !== PLAIN || this.end - start !== key.length) return false;
    for (let i = 0; i < key.length; i++) if (this.b[start + i] !== key[i]) return false;
    return true;
  }

  /** Skips any JSON value, checking its grammar. */
  skipValue(depth = 0): void {
    if (depth > 64) throw LEAVE;
    this.ws();
    const b = this.b;
    const c = b[this.pos];
    if (c === QUOTE) {
      this.string();
    } else if (c === 0x7b || c === 0x5b) {
      // An object's members are `"key": value`, an array's just `value`; both are separated by commas.
      const object = c === 0x7b;
      const close = object ? 0x7d : 0x5d;
      this.pos++;
      this.ws();
      if (b[this.pos] === close) {
        this.pos++;
        return;
      }
      for (;;) {
        if (object) {
          this.string();
          this.expect(0x3a);
        }
        this.skipValue(depth + 1);
        if (this.closes(close)) return;
      }
    } else if (c === 0x74) {
      this.literal('true');
    } else if (c === 0x66) {
      this.literal('false');
    } else if (c === 0x6e) {
      this.literal('null');
    } else {
      this.number();
    }
  }

  literal(word: string): void {
    for (let i = 0; i < word.length; i++) if (this.b[this.pos + i] !== word.charCodeAt(i)) throw LEAVE;
    this.pos += word.length;
  }

  /** A JSON number: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
  number(): void {
    const b = this.b;
    let p = this.pos;
    if (b[p] === 0x2d) p++;
    if (b[p] === 0x30) p++;
    else if (isDigit(b[p]) && b[p] !== 0x30) while (isDigit(b[p])) p++;
    else throw LEAVE;
    if (b[p] === 0x2e) {
      p++;
      if (!isDigit(b[p])) throw LEAVE;
      while (isDigit(b[p])) p++;
    }
    if (b[p] === 0x65 || b[p] === 0x45) {
      p++;
      if (b[p] === 0x2b || b[p] === 0x2d) p++;
      if (!isDigit(b[p])) throw LEAVE;
      while (isDigit(b[p])) p++;
    }
    this.pos = p;
  }
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** Grows a typed array to at least `n` elements. */
function grow<T extends Uint32Array | Uint8Array>(a: T, n: number): T {
  if (a.length >= n) return a;
  const bigger = new (a.constructor as new (n: number) => T)(Math.max(n, a.length * 2));
  bigger.set(a);
  return bigger;
}

/** Scans the `details` array; returns the number of entries. */
function scanDetails(s: Scanner, out: { spans: Uint32Array; kinds: Uint8Array }): number {
  const b = s.b;
  s.expect(0x5b);
  s.ws();
  if (b[s.pos] === 0x5d) {
    s.pos++;
    return 0;
  }
  let n = 0;
  for (;;) {
    out.spans = grow(out.spans, 6 * (n + 1));
    out.kinds = grow(out.kinds, 3 * (n + 1));
    s.expect(0x7b);
    let seen = 0;
    s.ws();
    if (b[s.pos] === 0x7d) throw LEAVE; // no fields: let the parser name the missing one
    for (;;) {
      const k = s.string();
      const field = s.is(k, KEY_TIME) ? TIME : s.is(k, KEY_STREAM) ? STREAM : s.is(k, KEY_LOG) ? LOG : -1;
      s.expect(0x3a);
      if (field >= 0) {
        if (seen & (1 << field)) throw LEAVE; // JSON.parse keeps the last one; rare enough to leave to it
        seen |= 1 << field;
        const start = s.string();
        out.spans[6 * n + 2 * field] = start;
        out.spans[6 * n + 2 * field + 1] = s.end;
        out.kinds[3 * n + field] = s.kind;
      } else {
        s.skipValue();
      }
      if (s.closes(0x7d)) break;
    }
    if (seen !== 7) throw LEAVE;
    n++;
    if (s.closes(0x5d)) return n;
  }
}

/**
 * Scans a *get model logs* body (of a 2xx response).
 * @returns the entries' spans, or `undefined` for a body the scanner leaves to json.ts
 * (which then reads it or explains what is wrong with it).
 */
export function scanPage(body: Buffer): Scan | undefined {
  const s = new Scanner(body);
  // Sized for entries of about 128 bytes (they grow if the page has more), so a page rarely reallocates them.
  const capacity = Math.max(64, Math.ceil(body.length / 128));
  const out = { spans: new Uint32Array(6 * capacity), kinds: new Uint8Array(3 * capacity) };
  let count = -1;
  let status = false;
  let token: string | undefined;
  let seenToken = false;
  try {
    s.expect(0x7b);
    s.ws();
    if (body[s.pos] === 0x7d) throw LEAVE;
    for (;;) {
      const k = s.string();
      s.expect(0x3a);
      if (s.is(k, KEY_STATUS)) {
        if (status) throw LEAVE;
        const v = s.string();
        if (!s.is(v, SUCCESS)) throw LEAVE;
        status = true;
      } else if (s.is(k, KEY_DETAILS)) {
        if (count >= 0) throw LEAVE;
        count = scanDetails(s, out);
      } else if (s.is(k, KEY_NEXT_TOKEN)) {
        if (seenToken) throw LEAVE;
        seenToken = true;
        s.ws();
        if (body[s.pos] === 0x6e) {
          s.literal('null');
        } else {
          const v = s.string();
          token = decodeString(body, v, s.end, s.kind) || undefined; // "" signals the end
        }
      } else {
        s.skipValue();
      }
      if (s.closes(0x7d)) break;
    }
    s.ws();
    if (s.pos !== body.length || !status || count < 0) throw LEAVE;
  } catch (err) {
    if (err === LEAVE) return undefined;
    throw err;
  }
  return { body, count, spans: out.spans, kinds: out.kinds, nextToken: token };
}
