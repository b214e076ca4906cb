//! Content keys of log entries. Entries carry no ID, so an entry is identified by
//! (model, exact time, stream, log); the key keeps the exact time in nanoseconds and
//! a 64-bit hash of the stream and text.
import { hash } from 'node:crypto';

/** The persisted identity of an entry within one model. */
export interface EntryKey {
  /** Exact entry time in nanoseconds since the epoch. */
  timeNs: bigint;
  /** 64-bit hash of stream and log text (signed, as SQLite stores integers). */
  hash: bigint;
}

/**
 * Hash of the stream and text of an entry. A collision needs two different lines of
 * the same model at the same nanosecond with equal 64-bit hashes (about 2^-64 per pair).
 */
export function contentHash(stream: string, log: string): bigint {
  return hash('sha1', `${stream}\u0000${log}`, 'buffer').readBigInt64LE(0);
}
