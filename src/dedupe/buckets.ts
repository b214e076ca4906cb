//! Packed storage of occurrence counts. The counts of all keys whose entry time falls in
//! one second are kept together in one blob, so a page of a thousand entries reads and
//! writes one or two rows instead of a thousand.
//!
//! In memory a bucket stays in its stored form: 28-byte records in a word array, found
//! through an open-addressing table of record numbers, also a typed array. A page is
//! deduped without an object or a `bigint` per entry, and without growing a JS heap
//! structure per key: times are compared as the two 32-bit halves of their int64, hashes as
//! the two halves of their IEEE double.
//!
//! A blob names the content hash its keys were made with (dedupe/key.ts): blobs written
//! since the current hash end with a 4-byte trailer, {@link KEYS_TRAILER}; blobs without it
//! were written by earlier versions and are keyed by the earlier hash. Such a bucket keeps
//! that hash for every key added to it until it is pruned, so entries counted before an
//! upgrade are still recognised when a window is read again after it.
//!
//! An entry without a time of its own (its time did not parse) is keyed by its text alone,
//! whichever window returns it: its record, time 0, is in a bucket of its own addressed by
//! its hash ({@link untimedBucket}), below every second an entry time can have. Such a
//! bucket counts as touched at the end of the last window that returned it, and is pruned
//! once no window can reach that window again (journal/dedupe-counts.ts).

/** Width of a bucket of entry times. */
export const BUCKET_MS = 1_000;

const RECORD_BYTES = 28;
/** 32-bit words per record: time (lo, hi), hash (lo, hi), delivered, seen, fetch id. */
const W = RECORD_BYTES / 4;
const DELIVERED = 4;
const SEEN = 5;
const FETCH = 6;

/** The last 4 bytes of a blob keyed by the current content hash (little-endian "MLK2"). */
export const KEYS_TRAILER = 0x324b4c4d;

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('the dedupe store assumes a little-endian machine');

/** The bucket (start ms) an entry time belongs to. */
export function bucketOf(timeNs: bigint): number {
  const ms = Number(timeNs / 1_000_000n);
  return ms - (((ms % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
}

/**
 * {@link bucketOf} for a time given as the halves of its int64 (`hi` signed), without a
 * `bigint` for the usual times after 1970.
 */
export function bucketOfHalves(lo: number, hi: number): number {
  if (hi < 0) return bucketOf(BigInt(hi) * 4_294_967_296n + BigInt(lo));
  // ns = h1·2^48 + h0·2^32 + lo, with 2^48 = 281474·10^9 + 976710656 and 2^32 = 4·10^9 + 294967296:
  // every product stays below 2^53, so the whole seconds come out exact.
  const h1 = hi >>> 16;
  const h0 = hi & 0xffff;
  const rest = h1 * 976_710_656 + h0 * 294_967_296 + lo;
  return (h1 * 281_474 + h0 * 4 + Math.floor(rest / 1e9)) * BUCKET_MS;
}

/** Below the first second of the year 0000, the earliest an entry time can have. */
const UNTIMED_BUCKETS_MS = -1e15;

/** The bucket of an entry keyed by its text alone, from its hash: one of 2^32, each for about one key. */
export function untimedBucket(hash: number): number {
  return UNTIMED_BUCKETS_MS - (hash % 4_294_967_296) * BUCKET_MS;
}

const F64 = new Float64Array(1);
const F64_WORDS = new Uint32Array(F64.buffer);

/** The halves of a hash's IEEE double, as the record stores them: `[lo, hi]` in a reused array. */
export function hashWords(hash: number): Uint32Array {
  F64[0] = hash;
  return F64_WORDS;
}

/** Start of a key's probe sequence in a table of `mask + 1` slots (the hash's low word is already well mixed). */
function slotOf(timeLo: number, hashLo: number, mask: number): number {
  return (timeLo ^ hashLo) & mask;
}

/** The keys of one bucket with their counts (the rule is under {@link PackedBucket.count}). */
export class PackedBucket {
  #w: Uint32Array;
  #n = 0;
  /** Linear-probing table: record number + 1 per slot, 0 when free; at most half full. */
  #slots: Int32Array;
  /**
   * Whether the keys are made with the content hash of earlier versions
   * (`legacyContentHash`): a blob written by them, without {@link KEYS_TRAILER}.
   */
  readonly legacy: boolean;

  private constructor(capacity: number, legacy: boolean) {
    this.#w = new Uint32Array(capacity * W);
    this.#slots = new Int32Array(tableSize(capacity));
    this.legacy = legacy;
  }

  /**
   * A bucket from its stored blob (a new, empty one, keyed by the current hash, when there
   * is none), with room for `adding` more keys before it grows (a hint: it grows as needed).
   * Throws on a blob that is neither form.
   */
  static decode(blob: Uint8Array | undefined, adding = 64): PackedBucket {
    const legacy = blob !== undefined && blob.byteLength % RECORD_BYTES === 0;
    if (blob && !legacy && !(blob.byteLength % RECORD_BYTES === 4 && trailerOf(blob) === KEYS_TRAILER)) {
      throw new Error(`dedupe bucket of ${blob.byteLength} bytes is neither 28-byte records nor records with the keys trailer`);
    }
    const stored = blob ? Math.floor(blob.byteLength / RECORD_BYTES) : 0;
    const bucket = new PackedBucket(Math.max(16, stored + Math.max(0, Math.min(adding, 4096))), legacy);
    if (!blob || stored === 0) return bucket;
    // Copied into aligned words: SQLite's buffer need not be 4-byte aligned.
    const words = new Uint32Array(stored * W);
    new Uint8Array(words.buffer).set(blob.subarray(0, stored * RECORD_BYTES));
    for (let r = 0; r < stored; r++) {
      const o = r * W;
      const at = bucket.find(words[o]!, words[o + 1]!, words[o + 2]!, words[o + 3]!, words[o + FETCH]!);
      // A key stored twice (never written so) keeps its last record, as a map would.
      bucket.#w[at * W + DELIVERED] = words[o + DELIVERED]!;
      bucket.#w[at * W + SEEN] = words[o + SEEN]!;
      bucket.#w[at * W + FETCH] = words[o + FETCH]!;
    }
    return bucket;
  }

  /** Number of keys. */
  get size(): number {
    return this.#n;
  }

  /**
   * The record of a key (time and hash as the halves of their stored forms), added with
   * zero counts and `fetchId` when absent.
   */
  find(timeLo: number, timeHi: number, hashLo: number, hashHi: number, fetchId: number): number {
    const w = this.#w;
    const slots = this.#slots;
    const mask = slots.length - 1;
    let at = slotOf(timeLo, hashLo, mask);
    for (let s = slots[at]!; s !== 0; s = slots[at]!) {
      const o = (s - 1) * W;
      if (w[o] === timeLo && w[o + 1] === timeHi && w[o + 2] === hashLo && w[o + 3] === hashHi) return s - 1;
      at = (at + 1) & mask;
    }
    const r = this.#n++;
    slots[at] = r + 1;
    if (r * W >= w.length) this.#grow();
    const o = r * W;
    const x = this.#w;
    x[o] = timeLo;
    x[o + 1] = timeHi;
    x[o + 2] = hashLo;
    x[o + 3] = hashHi;
    x[o + DELIVERED] = 0;
    x[o + SEEN] = 0;
    x[o + FETCH] = fetchId;
    if (2 * this.#n > slots.length) this.#rehash();
    return r;
  }

  /**
   * Counts one entry of fetch `fetchId` against record `r`; returns whether to deliver it.
   *
   * Occurrence-counted dedupe: for each key the store keeps `delivered`, the most copies
   * any single fetch of a window has shown; during a fetch it keeps `seen`, the running
   * count of the key in that fetch (a count from another fetch starts again at 0). An entry
   * is new exactly when `seen` exceeds `delivered`, so genuine identical twins are each
   * delivered once and re-reading an overlapping window delivers nothing twice.
   */
  count(r: number, fetchId: number): boolean {
    const w = this.#w;
    const o = r * W;
    const seen = w[o + FETCH] === fetchId >>> 0 ? w[o + SEEN]! + 1 : 1;
    w[o + SEEN] = seen;
    w[o + FETCH] = fetchId;
    if (seen <= w[o + DELIVERED]!) return false;
    w[o + DELIVERED] = seen;
    return true;
  }

  /** The counts of record `r`. */
  counts(r: number): { delivered: number; seen: number; fetchId: number } {
    const o = r * W;
    return { delivered: this.#w[o + DELIVERED]!, seen: this.#w[o + SEEN]!, fetchId: this.#w[o + FETCH]! };
  }

  /**
   * The stored blob: per key, time (int64 ns), hash (float64), delivered, seen, fetch id
   * (uint32 each), little-endian; then {@link KEYS_TRAILER} unless the bucket is legacy.
   */
  encode(): Buffer {
    const bytes = this.#n * RECORD_BYTES;
    if (this.legacy) return Buffer.from(this.#w.buffer, this.#w.byteOffset, bytes);
    if (bytes + 4 > this.#w.byteLength) this.#grow();
    this.#w[this.#n * W] = KEYS_TRAILER;
    return Buffer.from(this.#w.buffer, this.#w.byteOffset, bytes + 4);
  }

  #grow(): void {
    const w = new Uint32Array(this.#w.length * 2);
    w.set(this.#w);
    this.#w = w;
  }

  #rehash(): void {
    const w = this.#w;
    const slots = new Int32Array(this.#slots.length * 2);
    const mask = slots.length - 1;
    for (let r = 0; r < this.#n; r++) {
      let at = slotOf(w[r * W]!, w[r * W + 2]!, mask);
      while (slots[at] !== 0) at = (at + 1) & mask;
      slots[at] = r + 1;
    }
    this.#slots = slots;
  }
}

function trailerOf(blob: Uint8Array): number {
  const e = blob.byteLength;
  return (blob[e - 4]! | (blob[e - 3]! << 8) | (blob[e - 2]! << 16) | (blob[e - 1]! << 24)) >>> 0;
}

/** Slots for `records` keys: a power of two at least twice as many. */
function tableSize(records: number): number {
  let n = 32;
  while (n < 2 * records) n *= 2;
  return n;
}
