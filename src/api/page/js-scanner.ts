//! The JavaScript body scanner: finds each entry's `time`, `stream` and `log` strings in a
//! *get model logs* body's bytes (see scan.ts for what it accepts and reports). The
//! WebAssembly kernel (kernel/page.as.ts) is the same reader with 16-byte steps; this one
//! reads the pages the kernel cannot take, and every page where it does not load.
import { ESCAPED, LOG, NOT_THIS_PATH, OTHER, PLAIN, STREAM, TIME, tokenValue, type NotThisPath, type Scan, type StringKind } from './scan.js';

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
    if (this.b[this.pos] !== c) throw NOT_THIS_PATH;
    this.pos++;
  }

  /** After a member or an element: true at `close` (consumed), false at a comma (consumed). */
  closes(close: number): boolean {
    this.ws();
    const d = this.b[this.pos++];
    if (d === close) return true;
    if (d !== 0x2c) throw NOT_THIS_PATH;
    return false;
  }

  /** Scans a string at `pos` (after whitespace); returns the start of its contents. */
  string(): number {
    this.ws();
    const b = this.b;
    if (b[this.pos] !== QUOTE) throw NOT_THIS_PATH;
    const start = this.pos + 1;
    let p = start;
    let kind: StringKind = PLAIN;
    const n = b.length;
    for (;;) {
      if (p >= n) throw NOT_THIS_PATH;
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
          for (let k = 2; k < 6; k++) if (!isHex(b[p + k])) throw NOT_THIS_PATH;
          kind = OTHER;
          p += 6;
        } else {
          throw NOT_THIS_PATH;
        }
      } else if (c < 0x20) {
        throw NOT_THIS_PATH; // raw control characters are not valid JSON
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
    if (depth > 64) throw NOT_THIS_PATH;
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
    for (let i = 0; i < word.length; i++) if (this.b[this.pos + i] !== word.charCodeAt(i)) throw NOT_THIS_PATH;
    this.pos += word.length;
  }

  /** A JSON number: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
  number(): void {
    const b = this.b;
    let p = this.pos;
    if (b[p] === 0x2d) p++;
    if (b[p] === 0x30) p++;
    else if (isDigit(b[p]) && b[p] !== 0x30) while (isDigit(b[p])) p++;
    else throw NOT_THIS_PATH;
    if (b[p] === 0x2e) {
      p++;
      if (!isDigit(b[p])) throw NOT_THIS_PATH;
      while (isDigit(b[p])) p++;
    }
    if (b[p] === 0x65 || b[p] === 0x45) {
      p++;
      if (b[p] === 0x2b || b[p] === 0x2d) p++;
      if (!isDigit(b[p])) throw NOT_THIS_PATH;
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
    if (b[s.pos] === 0x7d) throw NOT_THIS_PATH; // no fields: let the parser name the missing one
    for (;;) {
      const k = s.string();
      const field = s.is(k, KEY_TIME) ? TIME : s.is(k, KEY_STREAM) ? STREAM : s.is(k, KEY_LOG) ? LOG : -1;
      s.expect(0x3a);
      if (field >= 0) {
        if (seen & (1 << field)) throw NOT_THIS_PATH; // JSON.parse keeps the last one; rare enough to leave to it
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
    if (seen !== 7) throw NOT_THIS_PATH;
    n++;
    if (s.closes(0x5d)) return n;
  }
}

/**
 * Scans a *get model logs* body (of a 2xx response).
 * @returns the entries' spans, or {@link NOT_THIS_PATH} for a body the scanner leaves to
 * `JSON.parse` and the full validation (which then read it or explain what is wrong with it).
 */
export function scanInJs(body: Buffer): Scan | NotThisPath {
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
    if (body[s.pos] === 0x7d) return NOT_THIS_PATH;
    for (;;) {
      const k = s.string();
      s.expect(0x3a);
      if (s.is(k, KEY_STATUS)) {
        if (status) return NOT_THIS_PATH;
        const v = s.string();
        if (!s.is(v, SUCCESS)) return NOT_THIS_PATH;
        status = true;
      } else if (s.is(k, KEY_DETAILS)) {
        if (count >= 0) return NOT_THIS_PATH;
        count = scanDetails(s, out);
      } else if (s.is(k, KEY_NEXT_TOKEN)) {
        if (seenToken) return NOT_THIS_PATH;
        seenToken = true;
        s.ws();
        if (body[s.pos] === 0x6e) {
          s.literal('null');
        } else {
          const v = s.string();
          token = tokenValue(body, v, s.end, s.kind);
        }
      } else {
        s.skipValue();
      }
      if (s.closes(0x7d)) break;
    }
    s.ws();
    if (s.pos !== body.length) return NOT_THIS_PATH;
  } catch (err) {
    if (err === NOT_THIS_PATH) return NOT_THIS_PATH;
    throw err;
  }
  if (!status || count < 0) return NOT_THIS_PATH;
  return { body, count, spans: out.spans, kinds: out.kinds, nextToken: token };
}
