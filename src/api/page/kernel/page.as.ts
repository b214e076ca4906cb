// The byte loops of a logs page in WebAssembly (AssemblyScript source; compiled to
// page.wasm by `npm run build:kernel`, and loaded by page-kernel.ts). Two entry points:
//
// - scan: the same reader as scanInJs in ../js-scanner.ts, over a body copied into this
//   module's memory. Same grammar, same answers: a count, or "leave it to JSON.parse".
// - renderRun: the journal lines of entries whose three strings are canonical as they are
//   (kinds PLAIN or ESCAPED), copied from the body, as ScannedPage.render writes them
//   (../scanned-page.ts).
//
// Addresses are absolute in this module's memory; the caller lays the buffers out above
// __heap_base. Spans are stored relative to the body's first byte, as the JavaScript
// scanner gives them. Nothing here allocates.

const PLAIN: u8 = 0;
const ESCAPED: u8 = 1;
const OTHER: u8 = 2;

/** Result of scan when the body is anything the reader leaves to JSON.parse. */
const UNSUPPORTED: i32 = -1;
/** Result of scan when the page has more entries than the caller made room for. */
const NO_ROOM: i32 = -2;

let base: usize = 0; // the body's first byte
let limit: usize = 0; // one past its last byte
let pos: usize = 0;
let end: usize = 0; // end of the last string's contents
let kind: u8 = PLAIN; // kind of the last string
let failed = false;
let spansAt: usize = 0;
let kindsAt: usize = 0;
let capacity: i32 = 0;

/** The `next_token` string of the last scan, relative to the body: 1 in tokenState when there was one. */
export let tokenState: i32 = 0;
export let tokenStart: i32 = 0;
export let tokenEnd: i32 = 0;
export let tokenKind: i32 = 0;
/** Where the last renderRun stopped writing. */
export let outAt: u32 = 0;

/** First free byte above the module's static data. */
export function heapBase(): usize {
  return __heap_base;
}

@inline function at(p: usize): u32 {
  return p < limit ? <u32>load<u8>(p) : 0x100;
}

@inline function ws(): void {
  let p = pos;
  while (p < limit) {
    const c = <u32>load<u8>(p);
    if (c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09) p++;
    else break;
  }
  pos = p;
}

@inline function expect(c: u32): bool {
  ws();
  if (at(pos) != c) return false;
  pos++;
  return true;
}

/** After a member or an element: 1 at `close`, 0 at a comma (both consumed), -1 otherwise. */
@inline function closes(close: u32): i32 {
  ws();
  const d = at(pos);
  pos++;
  if (d == close) return 1;
  return d == 0x2c ? 0 : -1;
}

@inline function isHex(c: u32): bool {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

@inline function isDigit(c: u32): bool {
  return c >= 0x30 && c <= 0x39;
}

/** Scans a string at `pos` (after whitespace); returns the start of its contents, or sets `failed`. */
function str(): usize {
  ws();
  if (at(pos) != 0x22) {
    failed = true;
    return 0;
  }
  const start = pos + 1;
  let p = start;
  let k = PLAIN;
  while (true) {
    // Sixteen bytes at a time up to the first quote, backslash or control character.
    while (p + 16 <= limit) {
      const v = v128.load(p);
      const stop = v128.or(v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x5c))), i8x16.lt_u(v, i8x16.splat(0x20)));
      const high = i8x16.bitmask(v);
      const bits = i8x16.bitmask(stop);
      if (bits == 0) {
        if (high != 0) k = OTHER;
        p += 16;
        continue;
      }
      const z = ctz(bits);
      if ((high & ((1 << z) - 1)) != 0) k = OTHER;
      p += z;
      break;
    }
    if (p >= limit) {
      failed = true;
      return 0;
    }
    const c = <u32>load<u8>(p);
    if (c == 0x22) break;
    if (c == 0x5c) {
      const e = at(p + 1);
      if (e == 0x22 || e == 0x5c || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) {
        if (k == PLAIN) k = ESCAPED;
        p += 2;
      } else if (e == 0x2f) {
        k = OTHER;
        p += 2;
      } else if (e == 0x75) {
        for (let j: usize = 2; j < 6; j++) {
          if (!isHex(at(p + j))) {
            failed = true;
            return 0;
          }
        }
        k = OTHER;
        p += 6;
      } else {
        failed = true;
        return 0;
      }
    } else if (c < 0x20) {
      failed = true; // raw control characters are not valid JSON
      return 0;
    } else {
      if (c >= 0x80) k = OTHER;
      p++;
    }
  }
  kind = k;
  end = p;
  pos = p + 1;
  return start;
}

/** Whether the last string scanned (contents [start, end)) is exactly `key`, unescaped. */
function isKey(start: usize, key: string): bool {
  const n = <usize>key.length;
  if (kind != PLAIN || end - start != n) return false;
  for (let i: usize = 0; i < n; i++) if (at(start + i) != <u32>key.charCodeAt(<i32>i)) return false;
  return true;
}

function literal(word: string): bool {
  const n = <usize>word.length;
  for (let i: usize = 0; i < n; i++) if (at(pos + i) != <u32>word.charCodeAt(<i32>i)) return false;
  pos += n;
  return true;
}

/** A JSON number: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
function number(): bool {
  let p = pos;
  if (at(p) == 0x2d) p++;
  if (at(p) == 0x30) p++;
  else if (isDigit(at(p))) while (isDigit(at(p))) p++;
  else return false;
  if (at(p) == 0x2e) {
    p++;
    if (!isDigit(at(p))) return false;
    while (isDigit(at(p))) p++;
  }
  if (at(p) == 0x65 || at(p) == 0x45) {
    p++;
    if (at(p) == 0x2b || at(p) == 0x2d) p++;
    if (!isDigit(at(p))) return false;
    while (isDigit(at(p))) p++;
  }
  pos = p;
  return true;
}

/** Skips any JSON value, checking its grammar. */
function skipValue(depth: i32): bool {
  if (depth > 64) return false;
  ws();
  const c = at(pos);
  if (c == 0x22) {
    str();
    return !failed;
  }
  if (c == 0x7b || c == 0x5b) {
    const object = c == 0x7b;
    const close: u32 = object ? 0x7d : 0x5d;
    pos++;
    ws();
    if (at(pos) == close) {
      pos++;
      return true;
    }
    while (true) {
      if (object) {
        str();
        if (failed || !expect(0x3a)) return false;
      }
      if (!skipValue(depth + 1)) return false;
      const r = closes(close);
      if (r < 0) return false;
      if (r == 1) return true;
    }
  }
  if (c == 0x74) return literal('true');
  if (c == 0x66) return literal('false');
  if (c == 0x6e) return literal('null');
  return number();
}

/** The `details` array: returns the number of entries, UNSUPPORTED or NO_ROOM. */
function details(): i32 {
  if (!expect(0x5b)) return UNSUPPORTED;
  ws();
  if (at(pos) == 0x5d) {
    pos++;
    return 0;
  }
  let i: i32 = 0;
  while (true) {
    if (i >= capacity) return NO_ROOM;
    if (!expect(0x7b)) return UNSUPPORTED;
    let seen = 0;
    ws();
    if (at(pos) == 0x7d) return UNSUPPORTED; // no fields: the parser names the missing one
    while (true) {
      const k = str();
      if (failed) return UNSUPPORTED;
      let field = -1;
      if (isKey(k, 'time')) field = 0;
      else if (isKey(k, 'stream')) field = 1;
      else if (isKey(k, 'log')) field = 2;
      if (!expect(0x3a)) return UNSUPPORTED;
      if (field >= 0) {
        if ((seen & (1 << field)) != 0) return UNSUPPORTED; // JSON.parse keeps the last one
        seen |= 1 << field;
        const s = str();
        if (failed) return UNSUPPORTED;
        const o = spansAt + <usize>(24 * i + 8 * field);
        store<u32>(o, <u32>(s - base));
        store<u32>(o + 4, <u32>(end - base));
        store<u8>(kindsAt + <usize>(3 * i + field), kind);
      } else if (!skipValue(0)) return UNSUPPORTED;
      const r = closes(0x7d);
      if (r < 0) return UNSUPPORTED;
      if (r == 1) break;
    }
    if (seen != 7) return UNSUPPORTED;
    i++;
    const r = closes(0x5d);
    if (r < 0) return UNSUPPORTED;
    if (r == 1) return i;
  }
}

/**
 * Scans the body at [body, body + length): each entry's spans (six u32) at `spans` and
 * kinds (three u8) at `kinds`, room for `room` entries. Returns the number of entries,
 * -1 for a body left to JSON.parse, -2 when there is not enough room.
 */
export function scan(body: usize, length: u32, spans: usize, kinds: usize, room: i32): i32 {
  base = body;
  limit = body + <usize>length;
  pos = body;
  failed = false;
  spansAt = spans;
  kindsAt = kinds;
  capacity = room;
  tokenState = 0;
  let count: i32 = -1;
  let status = false;
  let seenToken = false;
  if (!expect(0x7b)) return UNSUPPORTED;
  ws();
  if (at(pos) == 0x7d) return UNSUPPORTED;
  while (true) {
    const k = str();
    if (failed || !expect(0x3a)) return UNSUPPORTED;
    if (isKey(k, 'status')) {
      if (status) return UNSUPPORTED;
      const v = str();
      if (failed || !isKey(v, 'success')) return UNSUPPORTED;
      status = true;
    } else if (isKey(k, 'details')) {
      if (count >= 0) return UNSUPPORTED;
      count = details();
      if (count < 0) return count;
    } else if (isKey(k, 'next_token')) {
      if (seenToken) return UNSUPPORTED;
      seenToken = true;
      ws();
      if (at(pos) == 0x6e) {
        if (!literal('null')) return UNSUPPORTED;
        tokenState = 0;
      } else {
        const v = str();
        if (failed) return UNSUPPORTED;
        tokenStart = <i32>(v - base);
        tokenEnd = <i32>(end - base);
        tokenKind = kind;
        tokenState = 1;
      }
    } else if (!skipValue(0)) return UNSUPPORTED;
    const r = closes(0x7d);
    if (r < 0) return UNSUPPORTED;
    if (r == 1) break;
  }
  ws();
  if (pos != limit) return UNSUPPORTED;
  if (!status || count < 0) return UNSUPPORTED;
  return count;
}

const STREAM_KEY = memory.data<u8>([0x2c, 0x22, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x22, 0x3a]); // ,"stream":
const LOG_KEY = memory.data<u8>([0x2c, 0x22, 0x6c, 0x6f, 0x67, 0x22, 0x3a]); // ,"log":

/** Copies the string whose contents' span is at `span`, with its quotes, to `out`; returns the end. */
@inline function quoted(body: usize, span: usize, out: usize): usize {
  const start = <usize>load<u32>(span);
  const n = <usize>load<u32>(span + 4) + 2 - start;
  memory.copy(out, body + start - 1, n);
  return out + n;
}

/**
 * Writes the lines of kept entries `from`, `from + 1`, … (u32 indexes at `kept`, `count` in
 * all) at `out`: `head`, then the time, stream and log strings with their keys, then `}\n`.
 * Stops before the first entry with a string of kind OTHER, which the caller renders.
 * Returns where it stopped (`count` when done); `outAt` is then the end of what it wrote.
 */
export function renderRun(body: usize, spans: usize, kinds: usize, kept: usize, from: i32, count: i32, head: usize, headLength: u32, out: usize): i32 {
  let o = out;
  let k = from;
  for (; k < count; k++) {
    const i = <usize>load<u32>(kept + <usize>(4 * k));
    const K = kinds + 3 * i;
    if (load<u8>(K) == OTHER || load<u8>(K + 1) == OTHER || load<u8>(K + 2) == OTHER) break;
    const S = spans + 24 * i;
    memory.copy(o, head, headLength);
    o = quoted(body, S, o + <usize>headLength);
    memory.copy(o, STREAM_KEY, 10);
    o = quoted(body, S + 8, o + 10);
    memory.copy(o, LOG_KEY, 7);
    o = quoted(body, S + 16, o + 7);
    store<u16>(o, 0x0a7d); // }\n
    o += 2;
  }
  outAt = <u32>o;
  return k;
}
