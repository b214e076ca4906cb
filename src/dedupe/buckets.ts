//! Packed storage of occurrence counts. The counts of all keys whose entry time falls in
//! one second are kept together in one blob, so a page of a thousand entries reads and
//! writes one or two rows instead of a thousand.

import type { KeyCounts } from './occurrences.js';

/** Width of a bucket of entry times. */
export const BUCKET_MS = 1_000;

/** Counts of one key, with its identity. */
export interface StoredKey extends KeyCounts {
  timeNs: bigint;
  hash: number;
}

/** The keys of one bucket, looked up by hash then exact time. */
export type Bucket = Map<number, StoredKey[]>;

const RECORD_BYTES = 28;

/** The bucket (start ms) an entry time belongs to. */
export function bucketOf(timeNs: bigint): number {
  const ms = Number(timeNs / 1_000_000n);
  return ms - (((ms % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
}

/** The stored record of a key, added with zero counts when absent. */
export function keyFor(bucket: Bucket, timeNs: bigint, hash: number, fetchId: number): StoredKey {
  let list = bucket.get(hash);
  if (!list) {
    list = [];
    bucket.set(hash, list);
  }
  for (const k of list) if (k.timeNs === timeNs) return k;
  const k: StoredKey = { timeNs, hash, delivered: 0, seen: 0, fetchId };
  list.push(k);
  return k;
}

/** Inserts or replaces a key's counts. */
export function putKey(bucket: Bucket, key: StoredKey): void {
  const list = bucket.get(key.hash);
  if (!list) {
    bucket.set(key.hash, [key]);
    return;
  }
  const i = list.findIndex((k) => k.timeNs === key.timeNs);
  if (i >= 0) list[i] = key;
  else list.push(key);
}

/** Packs a bucket: per key, time (int64 ns), hash (float64), delivered, seen, fetch id (uint32 each). */
export function encodeBucket(bucket: Bucket): Buffer {
  let n = 0;
  for (const list of bucket.values()) n += list.length;
  const buf = Buffer.allocUnsafe(n * RECORD_BYTES);
  let o = 0;
  for (const list of bucket.values()) {
    for (const k of list) {
      buf.writeBigInt64LE(k.timeNs, o);
      buf.writeDoubleLE(k.hash, o + 8);
      buf.writeUInt32LE(k.delivered, o + 16);
      buf.writeUInt32LE(k.seen, o + 20);
      buf.writeUInt32LE(k.fetchId >>> 0, o + 24);
      o += RECORD_BYTES;
    }
  }
  return buf;
}

/** Unpacks a bucket written by {@link encodeBucket}. */
export function decodeBucket(buf: Uint8Array): Bucket {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const bucket: Bucket = new Map();
  for (let o = 0; o + RECORD_BYTES <= b.length; o += RECORD_BYTES) {
    putKey(bucket, {
      timeNs: b.readBigInt64LE(o),
      hash: b.readDoubleLE(o + 8),
      delivered: b.readUInt32LE(o + 16),
      seen: b.readUInt32LE(o + 20),
      fetchId: b.readUInt32LE(o + 24),
    });
  }
  return bucket;
}
