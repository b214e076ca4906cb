//! The head of an HTTP/1.1 response (status line and header fields), read from the bytes
//! a connection received. Strict where a lenient reading could misframe the body, lenient
//! where servers commonly differ (bare LF line ends, an empty reason phrase).
import { isTokenRange } from '../../net/http-token.js';
import { badResponse } from './errors.js';

/** Largest response head accepted, as undici's and Node's default (16 KiB). */
export const MAX_HEAD_BYTES = 16 * 1024;

/** A parsed response head. */
export interface ResponseHead {
  status: number;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minorVersion: number;
  /** Field names in lower case; repeated fields joined with `, `. */
  headers: Record<string, string>;
  /** Offset of the first byte after the head in the buffer read. */
  end: number;
}

const HEAD_END = /\r?\n\r?\n/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?:[ \t][^\r\n]*)?$/;

/**
 * Reads the head that starts at `start` in `buf`. Undefined while it is incomplete.
 * @throws TransportError (`MLS_HTTP_BAD_RESPONSE`) when it is malformed or over {@link MAX_HEAD_BYTES}.
 */
export function readResponseHead(buf: Buffer, start: number): ResponseHead | undefined {
  const available = buf.length - start;
  const limit = start + Math.min(available, MAX_HEAD_BYTES + 4);
  // Latin-1 keeps one character per byte, so offsets in the text are offsets in the buffer.
  // Only the head is decoded when its blank line is there: the rest of the buffer is the body,
  // up to 16 KiB of it that would be decoded for nothing.
  const text = buf.toString('latin1', start, blankLineEnd(buf, start, limit) ?? limit);
  const m = HEAD_END.exec(text);
  if (m === null) {
    // A head within the limit has its blank line start by MAX_HEAD_BYTES: past that, only
    // line-end bytes may still be its beginning.
    if (available > MAX_HEAD_BYTES && (available >= MAX_HEAD_BYTES + 4 || /[^\r\n]/.test(text.slice(MAX_HEAD_BYTES)))) throw badResponse(`a head over ${MAX_HEAD_BYTES} bytes`);
    return undefined;
  }
  const headEnd = m.index;
  if (headEnd > MAX_HEAD_BYTES) throw badResponse(`a head over ${MAX_HEAD_BYTES} bytes`);
  // Lines are read in place (no array of lines, no string per line): this runs at every request.
  let lineEnd = endOfLine(text, 0, headEnd);
  const statusLine = text.slice(0, lineEnd);
  const status = STATUS_LINE.exec(statusLine);
  if (status === null) throw badResponse(`the status line is ${JSON.stringify(statusLine.slice(0, 64))}`);
  // No prototype: a field named `constructor` or `__proto__` is a field like any other.
  const headers = Object.create(null) as Record<string, string>;
  let last: string | undefined;
  for (let at = nextLine(text, lineEnd, headEnd); at >= 0; at = nextLine(text, lineEnd, headEnd)) {
    lineEnd = endOfLine(text, at, headEnd);
    if (at === lineEnd) throw badResponse('an empty header line');
    const first = text.charCodeAt(at);
    if (first === 0x20 || first === 0x09) {
      // An obsolete line folding continues the field before it (RFC 9112 §5.2).
      if (last === undefined) throw badResponse('a folded line before any header field');
      const more = valueOf(text, at, lineEnd);
      if (more === undefined) throw badResponse(`a control character in the value of ${last}`);
      const before = headers[last]!;
      if (more !== '') headers[last] = before === '' ? more : `${before} ${more}`;
      continue;
    }
    const colon = text.indexOf(':', at);
    const nameEnd = colon >= 0 && colon < lineEnd ? colon : at;
    if (!isTokenRange(text, at, nameEnd)) throw badResponse(`a header line without a valid field name: ${JSON.stringify(text.slice(at, Math.min(lineEnd, at + 64)))}`);
    const name = text.slice(at, nameEnd);
    const value = valueOf(text, nameEnd + 1, lineEnd);
    if (value === undefined) throw badResponse(`a control character in the value of ${name}`);
    const key = name.toLowerCase();
    const before = headers[key];
    headers[key] = before === undefined ? value : `${before}, ${value}`;
    last = key;
  }
  return { status: Number(status[2]), minorVersion: Number(status[1]), headers, end: start + headEnd + m[0].length };
}

/** Where the line that starts at `from` ends (its `\r\n` or `\n` not included); `headEnd` for the last line. */
function endOfLine(text: string, from: number, headEnd: number): number {
  const lf = text.indexOf('\n', from);
  if (lf < 0 || lf >= headEnd) return headEnd;
  return lf > from && text.charCodeAt(lf - 1) === 0x0d ? lf - 1 : lf;
}

/** Where the line after the one that ends at `lineEnd` starts, or -1 after the last line. */
function nextLine(text: string, lineEnd: number, headEnd: number): number {
  if (lineEnd >= headEnd) return -1;
  return text.charCodeAt(lineEnd) === 0x0d ? lineEnd + 2 : lineEnd + 1;
}

/**
 * The field value in `text` from `from` to `to`, without the optional white space around it
 * (spaces and tabs only: `trim` would also take U+00A0); undefined when it holds a control
 * character other than tab.
 */
function valueOf(text: string, from: number, to: number): string | undefined {
  let a = from;
  let b = to;
  while (a < b && isOws(text.charCodeAt(a))) a++;
  while (b > a && isOws(text.charCodeAt(b - 1))) b--;
  for (let i = a; i < b; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return undefined;
  }
  return text.slice(a, b);
}

/**
 * The offset just past the first blank line (`\n` then `\n` or `\r\n`) when it ends by
 * `limit`, or undefined. The head's own reading then finds that same blank line, whichever
 * line ends it uses.
 */
function blankLineEnd(buf: Buffer, start: number, limit: number): number | undefined {
  for (let i = buf.indexOf(0x0a, start); i !== -1 && i < limit; i = buf.indexOf(0x0a, i + 1)) {
    const next = buf[i + 1];
    if (next === 0x0a) return i + 2 <= limit ? i + 2 : undefined;
    if (next === 0x0d && buf[i + 2] === 0x0a) return i + 3 <= limit ? i + 3 : undefined;
  }
  return undefined;
}

const isOws = (c: number): boolean => c === 0x20 || c === 0x09;
