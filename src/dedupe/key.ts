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

/**
 * Hash of the stream and text of an entry: two independent 32-bit multiply-xorshift lanes
 * (cyrb53) over the UTF-16 code units, combined into 53 bits. Pure JavaScript: no buffer
 * copy and no native call per entry.
 */
export function contentHash(stream: string, log: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < stream.length; i++) {
    const c = stream.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  // separator between the stream and the text, so ("ab", "c") and ("a", "bc") differ
  h1 = Math.imul(h1 ^ 0x1f, 2654435761);
  h2 = Math.imul(h2 ^ 0x1f, 1597334677);
  for (let i = 0; i < log.length; i++) {
    const c = log.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
