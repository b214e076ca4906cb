//! The head of an HTTP/1.1 response (status line and header fields), read from the bytes
//! a connection received. Strict where a lenient reading could misframe the body, lenient
//! where servers commonly differ (bare LF line ends, an empty reason phrase).
import { HTTP_TOKEN } from '../../net/http-token.js';
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
// Control characters other than tab are not allowed in a field value.
const BAD_VALUE = /[\0-\x08\x0a-\x1f\x7f]/;

/**
 * Reads the head that starts at `start` in `buf`. Undefined while it is incomplete.
 * @throws TransportError (`MLS_HTTP_BAD_RESPONSE`) when it is malformed or over {@link MAX_HEAD_BYTES}.
 */
export function readResponseHead(buf: Buffer, start: number): ResponseHead | undefined {
  const available = buf.length - start;
  // Latin-1 keeps one character per byte, so offsets in the text are offsets in the buffer.
  const text = buf.toString('latin1', start, start + Math.min(available, MAX_HEAD_BYTES + 4));
  const m = HEAD_END.exec(text);
  if (m === null) {
    // A head within the limit has its blank line start by MAX_HEAD_BYTES: past that, only
    // line-end bytes may still be its beginning.
    if (available > MAX_HEAD_BYTES && (available >= MAX_HEAD_BYTES + 4 || /[^\r\n]/.test(text.slice(MAX_HEAD_BYTES)))) throw badResponse(`a head over ${MAX_HEAD_BYTES} bytes`);
    return undefined;
  }
  if (m.index > MAX_HEAD_BYTES) throw badResponse(`a head over ${MAX_HEAD_BYTES} bytes`);
  const lines = text.slice(0, m.index).split(/\r?\n/);
  const status = STATUS_LINE.exec(lines[0]!);
  if (status === null) throw badResponse(`the status line is ${JSON.stringify(lines[0]!.slice(0, 64))}`);
  // No prototype: a field named `constructor` or `__proto__` is a field like any other.
  const headers = Object.create(null) as Record<string, string>;
  let last: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length === 0) throw badResponse('an empty header line');
    const first = line.charCodeAt(0);
    if (first === 0x20 || first === 0x09) {
      // An obsolete line folding continues the field before it (RFC 9112 §5.2).
      if (last === undefined) throw badResponse('a folded line before any header field');
      const more = trimOws(line, 0);
      if (BAD_VALUE.test(more)) throw badResponse(`a control character in the value of ${last}`);
      const before = headers[last]!;
      if (more !== '') headers[last] = before === '' ? more : `${before} ${more}`;
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!HTTP_TOKEN.test(name)) throw badResponse(`a header line without a valid field name: ${JSON.stringify(line.slice(0, 64))}`);
    const value = trimOws(line, colon + 1);
    if (BAD_VALUE.test(value)) throw badResponse(`a control character in the value of ${name}`);
    const key = name.toLowerCase();
    const before = headers[key];
    headers[key] = before === undefined ? value : `${before}, ${value}`;
    last = key;
  }
  return { status: Number(status[2]), minorVersion: Number(status[1]), headers, end: start + m.index + m[0].length };
}

/**
 * `line` from `from` without the optional white space around it: spaces and tabs only
 * (`trim` would also take U+00A0). A loop: a global regular expression took a third of
 * the head's reading.
 */
function trimOws(line: string, from: number): string {
  let a = from;
  let b = line.length;
  while (a < b && isOws(line.charCodeAt(a))) a++;
  while (b > a && isOws(line.charCodeAt(b - 1))) b--;
  return line.slice(a, b);
}

const isOws = (c: number): boolean => c === 0x20 || c === 0x09;
