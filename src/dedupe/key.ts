//! Content keys of log entries. Entries carry no ID, so an entry is identified by
//! (model, exact time in nanoseconds, stream, log). The persisted key keeps the exact time
//! and a 53-bit hash of the stream and text: two different lines would have to share the
//! model, the nanosecond and the hash to be mistaken for each other (about 1 in 2^53 per
//! pair of lines printed at the very same nanosecond).
//!
//! The hash is taken over the stream and the text as `JSON.stringify` writes them, without
//! the quotes, in UTF-8: the canonical form a body's string already has when the scanner
//! classes it plain or escaped (api/page/scanner.ts), so for nearly every entry it is computed
//! from the body's bytes where they lie, escapes and all. (The form is one-to-one: distinct
//! strings, lone surrogates included, have distinct JSON.) The text goes through four
//! independent multiply-rotate lanes, 16 bytes per step (the xxHash32 layout), so the
//! multiplications of one step do not wait for each other; the stream, a few bytes, seeds
//! them. Both forms below, from strings and from a body's bytes, give the same number
//! (property-tested), and fixed vectors pin it: the stored dedupe counts depend on it.
//!
//! State files written before this hash keep their dedupe buckets under the earlier one
//! (cyrb53 over UTF-16 code units, {@link legacyContentHash}); see dedupe/buckets.ts.

const P1 = 2654435761;
const P2 = 2246822519;
const P3 = 3266489917;
const P4 = 668265263;
const P5 = 374761393;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** The lanes' seed from the stream's bytes (a stream is a few bytes: one serial pass is enough). */
function streamSeed(b: Uint8Array, start: number, end: number): number {
  let h = 0x3c6ef372 ^ (end - start);
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, P1);
  return h ^ (h >>> 15);
}

/**
 * The 53-bit hash of the bytes `[p, end)` of `v`, with the lanes seeded by `seed`, written
 * to `out[at]`: a 53-bit number returned from a function that is not inlined is boxed on
 * the heap, one allocation per entry; written to a typed array it stays a double.
 */
function textHash(v: DataView, p: number, end: number, seed: number, out: Float64Array, at: number): void {
  const len = end - p;
  let h1: number;
  let h2: number;
  if (len >= 16) {
    let a = (seed + P1 + P2) | 0;
    let b = (seed + P2) | 0;
    let c = seed | 0;
    let d = (seed - P1) | 0;
    const last = end - 16;
    do {
      a = Math.imul(rotl((a + Math.imul(v.getUint32(p, true), P2)) | 0, 13), P1);
      b = Math.imul(rotl((b + Math.imul(v.getUint32(p + 4, true), P2)) | 0, 13), P1);
      c = Math.imul(rotl((c + Math.imul(v.getUint32(p + 8, true), P2)) | 0, 13), P1);
      d = Math.imul(rotl((d + Math.imul(v.getUint32(p + 12, true), P2)) | 0, 13), P1);
      p += 16;
    } while (p <= last);
    // Two different merges of the 128 bits of lanes: the low and the high part of the result.
    h1 = (rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18)) | 0;
    h2 = ((rotl(a, 19) ^ rotl(b, 3)) + (rotl(c, 27) ^ rotl(d, 9))) | 0;
  } else {
    h1 = (seed + P5) | 0;
    h2 = (seed ^ P4) | 0;
  }
  h1 = (h1 + len) | 0;
  h2 = (h2 ^ Math.imul(len, P3)) | 0;
  for (; p + 4 <= end; p += 4) {
    const w = v.getUint32(p, true);
    h1 = Math.imul(rotl((h1 + Math.imul(w, P3)) | 0, 17), P4);
    h2 = Math.imul(rotl((h2 ^ Math.imul(w, P1)) | 0, 15), P2);
  }
  for (; p < end; p++) {
    const c = v.getUint8(p);
    h1 = Math.imul(rotl((h1 + Math.imul(c, P5)) | 0, 11), P1);
    h2 = Math.imul(rotl((h2 ^ Math.imul(c, P3)) | 0, 13), P4);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 15), P2);
  h1 = Math.imul(h1 ^ (h1 >>> 13), P3);
  h1 ^= h1 >>> 16;
  h2 = Math.imul(h2 ^ (h2 >>> 16), P3);
  h2 = Math.imul(h2 ^ (h2 >>> 13), P2);
  h2 ^= h2 >>> 15;
  h2 ^= Math.imul(h1, P5);
  out[at] = 4294967296 * (h2 & 0x1fffff) + (h1 >>> 0);
}

/** Room for one hash, for the forms that return it. */
const HASH_OUT = new Float64Array(1);

const utf8 = new TextEncoder();
/** Reused room for the UTF-8 of strings hashed from objects. */
let scratch = new Uint8Array(4096);
let scratchView = new DataView(scratch.buffer);

/**
 * Hash of the stream and text of an entry, from strings. The same number as
 * {@link asciiContentHashInto} writes for the same strings held as JSON in a body.
 */
export function contentHash(stream: string, log: string): number {
  const s = JSON.stringify(stream);
  const l = JSON.stringify(log);
  // JSON.stringify escapes lone surrogates, so the UTF-8 is at most 3 bytes a code unit.
  if (3 * (s.length + l.length) > scratch.length) {
    scratch = new Uint8Array(2 ** Math.ceil(Math.log2(3 * (s.length + l.length))));
    scratchView = new DataView(scratch.buffer);
  }
  const streamEnd = utf8.encodeInto(s, scratch).written;
  const end = streamEnd + utf8.encodeInto(l, scratch.subarray(streamEnd)).written;
  // Without the quotes of either string.
  textHash(scratchView, streamEnd + 1, end - 1, streamSeed(scratch, 1, streamEnd - 1), HASH_OUT, 0);
  return HASH_OUT[0]!;
}

/**
 * {@link contentHash} of a stream and a log held as the contents of JSON strings in `body`
 * (`view` is a DataView of the same bytes) that are in the form `JSON.stringify` writes, as
 * the scanner's `PLAIN` and `ESCAPED` strings are: hashed where they lie, and written to
 * `out[at]` (a page's hash array), with no number boxed on the way.
 */
export function asciiContentHashInto(out: Float64Array, at: number, body: Uint8Array, view: DataView, streamStart: number, streamEnd: number, logStart: number, logEnd: number): void {
  textHash(view, logStart, logEnd, streamSeed(body, streamStart, streamEnd), out, at);
}

/**
 * The hash of an entry without a time of its own (its time did not parse): its key is its
 * text alone, the time's text hashed with the stream and the log.
 */
export function untimedHash(time: string, stream: string, log: string): number {
  return contentHash(stream, `${time}\u0000${log}`);
}

// ---- the hash of earlier versions -------------------------------------------------------

const SEED1 = 0xdeadbeef;
const SEED2 = 0x41c6ce57;
const M1 = 2654435761;
const M2 = 1597334677;
const SEPARATOR = 0x1f;

/** Combines the two lanes into 53 bits. */
function legacyFinish(h1: number, h2: number): number {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * The content hash of earlier versions, which the dedupe buckets they wrote are keyed by:
 * two 32-bit multiply-xorshift lanes (cyrb53) over the UTF-16 code units of the stream, a
 * separator and the text. Each step waits for the one before, which is why it was replaced.
 */
export function legacyContentHash(stream: string, log: string): number {
  let h1 = SEED1;
  let h2 = SEED2;
  for (let i = 0; i < stream.length; i++) {
    const c = stream.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, M1);
    h2 = Math.imul(h2 ^ c, M2);
  }
  h1 = Math.imul(h1 ^ SEPARATOR, M1);
  h2 = Math.imul(h2 ^ SEPARATOR, M2);
  for (let i = 0; i < log.length; i++) {
    const c = log.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, M1);
    h2 = Math.imul(h2 ^ c, M2);
  }
  return legacyFinish(h1, h2);
}
