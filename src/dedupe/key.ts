//! Content keys of log entries. Entries carry no ID, so an entry is identified by
//! (model, exact time in nanoseconds, stream, log). The persisted key keeps the exact time
//! and a 53-bit hash of the stream and text: two different lines would have to share the
//! model, the nanosecond and the hash to be mistaken for each other (about 1 in 2^53 per
//! pair of lines printed at the very same nanosecond).

/** The persisted identity of an entry within one model. */
export interface EntryKey {
  /** Exact entry time in nanoseconds since the epoch. */
  timeNs: bigint;
  /** 53-bit hash of stream and log text (a safe integer, stored as a SQLite INTEGER). */
  hash: number;
}

const SEED1 = 0xdeadbeef;
const SEED2 = 0x41c6ce57;
const M1 = 2654435761;
const M2 = 1597334677;
const SEPARATOR = 0x1f;

/** Combines the two lanes into 53 bits. */
function finish(h1: number, h2: number): number {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * Hash of the stream and text of an entry: two independent 32-bit multiply-xorshift lanes
 * (cyrb53) over the UTF-16 code units, combined into 53 bits. Pure JavaScript: no buffer
 * copy and no native call per entry.
 */
export function contentHash(stream: string, log: string): number {
  let h1 = SEED1;
  let h2 = SEED2;
  for (let i = 0; i < stream.length; i++) {
    const c = stream.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, M1);
    h2 = Math.imul(h2 ^ c, M2);
  }
  // separator between the stream and the text, so ("ab", "c") and ("a", "bc") differ
  h1 = Math.imul(h1 ^ SEPARATOR, M1);
  h2 = Math.imul(h2 ^ SEPARATOR, M2);
  for (let i = 0; i < log.length; i++) {
    const c = log.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, M1);
    h2 = Math.imul(h2 ^ c, M2);
  }
  return finish(h1, h2);
}

/** The value of the escape character after a backslash (only the escapes `JSON.stringify` writes for ASCII). */
function unescaped(c: number): number {
  switch (c) {
    case 0x62:
      return 0x08;
    case 0x66:
      return 0x0c;
    case 0x6e:
      return 0x0a;
    case 0x72:
      return 0x0d;
    case 0x74:
      return 0x09;
    default:
      return c; // `"` and `\`
  }
}

/**
 * {@link contentHash} of a stream and a log held as the contents of JSON strings that are
 * ASCII with at most the escapes `JSON.stringify` writes (api/logs-scan.ts: `PLAIN` or
 * `ESCAPED`): each byte, after unescaping, is one UTF-16 code unit.
 */
export function asciiContentHash(b: Buffer, streamStart: number, streamEnd: number, logStart: number, logEnd: number): number {
  let h1 = SEED1;
  let h2 = SEED2;
  for (let i = streamStart; i < streamEnd; i++) {
    let c = b[i]!;
    if (c === 0x5c) c = unescaped(b[++i]!);
    h1 = Math.imul(h1 ^ c, M1);
    h2 = Math.imul(h2 ^ c, M2);
  }
  h1 = Math.imul(h1 ^ SEPARATOR, M1);
  h2 = Math.imul(h2 ^ SEPARATOR, M2);
  for (let i = logStart; i < logEnd; i++) {
    let c = b[i]!;
    if (c === 0x5c) c = unescaped(b[++i]!);
    h1 = Math.imul(h1 ^ c, M1);
    h2 = Math.imul(h2 ^ c, M2);
  }
  return finish(h1, h2);
}
