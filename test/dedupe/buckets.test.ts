import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KEYS_TRAILER, PackedBucket, bucketOf, bucketOfHalves, hashWords } from '../../src/dedupe/buckets.js';
import { runs } from '../helpers/long.js';

interface KeyCounts {
  delivered: number;
  seen: number;
  fetchId: number;
}

/** The rule written as a pure function, the reference the packed form is checked against. */
function countOccurrence(stored: KeyCounts | undefined, fetchId: number): { counts: KeyCounts; isNew: boolean } {
  const seen = stored !== undefined && stored.fetchId === fetchId ? stored.seen + 1 : 1;
  const delivered = stored?.delivered ?? 0;
  const isNew = seen > delivered;
  return { counts: { delivered: isNew ? seen : delivered, seen, fetchId }, isNew };
}

/** A key as the commit loop sees it: an entry time (int64 halves) and a content hash. */
interface Key {
  ns: bigint;
  hash: number;
}

function halves(ns: bigint): [lo: number, hi: number] {
  const a = new BigInt64Array([ns]);
  const w = new Uint32Array(a.buffer);
  return [w[0]!, w[1]!];
}

/** Counts one entry of `fetchId` under `key` in the packed bucket, as the commit loop does. */
function count(bucket: PackedBucket, key: Key, fetchId: number): boolean {
  const [lo, hi] = halves(key.ns);
  const h = hashWords(key.hash);
  return bucket.count(bucket.find(lo, hi, h[0]!, h[1]!, fetchId), fetchId);
}

const T0 = 1_714_564_800_000_000_000n;
const KEYS: Record<string, Key> = {
  a: { ns: T0, hash: 1 },
  b: { ns: T0 + 1n, hash: 1 },
  c: { ns: T0, hash: 2 },
  t: { ns: T0 + 5n, hash: 2 ** 52 + 3 },
};

/** Runs fetches of entries (keys) through occurrence counting; returns what was delivered. */
function run(fetches: string[][]): { delivered: string[]; bucket: PackedBucket } {
  const bucket = PackedBucket.decode(undefined);
  const delivered: string[] = [];
  fetches.forEach((entries, i) => {
    for (const key of entries) if (count(bucket, KEYS[key]!, i + 1)) delivered.push(key);
  });
  return { delivered, bucket };
}

function countsOf(bucket: PackedBucket, key: Key): KeyCounts {
  const [lo, hi] = halves(key.ns);
  const h = hashWords(key.hash);
  return bucket.counts(bucket.find(lo, hi, h[0]!, h[1]!, 0));
}

describe('occurrence-counted dedupe', () => {
  it('delivers both genuine twins once each and nothing again on a re-read (the worked example)', () => {
    // fetch 1 spans two pages: "a b" then "b"; fetch 2 re-reads an overlapping window "b a b c".
    const { delivered, bucket } = run([['a', 'b', 'b'], ['b', 'a', 'b', 'c']]);
    expect(delivered).toEqual(['a', 'b', 'b', 'c']);
    expect(countsOf(bucket, KEYS.b!).delivered).toBe(2);
    expect(countsOf(bucket, KEYS.a!).delivered).toBe(1);
  });

  it('a naive set of keys would lose the second twin; counts do not', () => {
    const { delivered } = run([['a', 'a']]);
    expect(delivered).toEqual(['a', 'a']);
  });

  it('a later fetch that shows a third copy delivers exactly one more', () => {
    const { delivered } = run([['t', 't'], ['t', 't', 't']]);
    expect(delivered).toEqual(['t', 't', 't']);
  });

  it('a resumed fetch (same fetch id) continues counting instead of starting over, also across a stored round trip', () => {
    let bucket = PackedBucket.decode(undefined);
    expect(count(bucket, KEYS.a!, 7)).toBe(true);
    // crash and resume the same fetch from its saved token: the next page shows a second copy
    bucket = PackedBucket.decode(bucket.encode());
    expect(count(bucket, KEYS.a!, 7)).toBe(true);
    // a restarted window (new fetch id) re-reads both copies: nothing new
    bucket = PackedBucket.decode(bucket.encode());
    expect(count(bucket, KEYS.a!, 8)).toBe(false);
    expect(count(bucket, KEYS.a!, 8)).toBe(false);
  });

  it('keys differing only in time or only in hash are different keys', () => {
    const { delivered } = run([['a', 'b', 'c']]);
    expect(delivered).toEqual(['a', 'b', 'c']);
  });

  it('the packed bucket decides exactly as the pure rule, through encode/decode round trips and many colliding keys', () => {
    const key = fc.record({
      ns: fc.oneof(fc.bigInt({ min: T0 - 5n, max: T0 + 5n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
      hash: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
    });
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 8 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 }), fc.boolean()), { maxLength: 300 }), (keys, steps) => {
        const pure = new Map<number, KeyCounts>();
        let bucket = PackedBucket.decode(undefined);
        for (const [pick, fetchId, roundTrip] of steps) {
          const k = pick % keys.length;
          // two picks of equal keys are the same key
          const id = keys.findIndex((x) => x.ns === keys[k]!.ns && x.hash === keys[k]!.hash);
          const r = countOccurrence(pure.get(id), fetchId);
          pure.set(id, r.counts);
          if (roundTrip) bucket = PackedBucket.decode(bucket.encode());
          expect(count(bucket, keys[k]!, fetchId)).toBe(r.isNew);
          expect(countsOf(bucket, keys[k]!)).toEqual(r.counts);
        }
        expect(bucket.size).toBe(pure.size);
      }),
      { numRuns: runs(300) },
    );
  });

  it('keeps thousands of keys apart as the table grows, including keys that start on the same slot', () => {
    // Keys whose time's and hash's low words XOR to the same value start on the same slot
    // of any table size; the others spread. Every key is found again as itself, across
    // growth, rehashing and encode/decode.
    const keys: Key[] = [];
    for (let i = 0; i < 3_000; i++) keys.push({ ns: T0 + BigInt(i) * 1_000n, hash: i * 7_919 + 11 });
    for (let i = 0; i < 500; i++) {
      const hash = 1_000_003 * i + 17;
      const timeLo = (0x5a5a5a5a ^ hashWords(hash)[0]!) >>> 0; // time low word XOR hash low word: the same for all 500
      keys.push({ ns: ((T0 >> 32n) << 32n) + BigInt(timeLo), hash });
    }
    // sized for none of them (grows from the smallest table), and for all of them at once: the same records
    const grown = PackedBucket.decode(undefined, 0);
    const sized = PackedBucket.decode(undefined, keys.length);
    for (const k of keys) expect([count(grown, k, 1), count(sized, k, 1)]).toEqual([true, true]);
    expect(sized.encode()).toEqual(grown.encode());
    let bucket = PackedBucket.decode(undefined);
    for (const k of keys) expect(count(bucket, k, 1)).toBe(true);
    // read again before and after a round trip: nothing is new, no key is added twice
    for (const k of keys) expect(count(bucket, k, 2)).toBe(false);
    expect(bucket.size).toBe(keys.length);
    bucket = PackedBucket.decode(bucket.encode());
    for (const k of keys) expect(count(bucket, k, 2)).toBe(true); // a second copy in the same fetch: a twin
    expect(bucket.size).toBe(keys.length);
    for (const k of keys.slice(0, 50)) expect([count(bucket, k, 2), countsOf(bucket, k)]).toEqual([true, { delivered: 3, seen: 3, fetchId: 2 }]);
    expect(bucket.size).toBe(keys.length);
  });

  it('reads the blobs the previous in-memory form wrote: 28-byte records, time int64 and hash float64, little-endian', () => {
    const blob = Buffer.alloc(2 * 28);
    blob.writeBigInt64LE(T0, 0);
    blob.writeDoubleLE(2 ** 52 + 3, 8);
    blob.writeUInt32LE(2, 16); // delivered
    blob.writeUInt32LE(2, 20); // seen
    blob.writeUInt32LE(9, 24); // fetch id
    blob.writeBigInt64LE(-5n, 28);
    blob.writeDoubleLE(7, 36);
    blob.writeUInt32LE(1, 44);
    blob.writeUInt32LE(1, 48);
    blob.writeUInt32LE(3, 52);
    // at an odd offset, as a buffer from SQLite may be
    const unaligned = Buffer.concat([Buffer.from([0]), blob]).subarray(1);
    const bucket = PackedBucket.decode(unaligned);
    expect(bucket.size).toBe(2);
    expect(countsOf(bucket, { ns: T0, hash: 2 ** 52 + 3 })).toEqual({ delivered: 2, seen: 2, fetchId: 9 });
    expect(countsOf(bucket, { ns: -5n, hash: 7 })).toEqual({ delivered: 1, seen: 1, fetchId: 3 });
    expect(Buffer.from(bucket.encode()).equals(blob)).toBe(true);
  });
});

describe('the content hash a bucket is keyed by', () => {
  it('marks a new bucket as keyed by the current hash, and keeps the mark through a round trip', () => {
    const { bucket } = run([['a', 'b', 'c'], ['a']]);
    expect(bucket.legacy).toBe(false);
    const blob = bucket.encode();
    expect(blob.byteLength).toBe(3 * 28 + 4);
    expect(blob.readUInt32LE(3 * 28)).toBe(KEYS_TRAILER);
    const again = PackedBucket.decode(blob);
    expect(again.legacy).toBe(false);
    expect(again.size).toBe(3);
    expect(countsOf(again, KEYS.a!)).toEqual({ delivered: 1, seen: 1, fetchId: 2 });
    // more keys after the mark was written: the mark moves to the new end
    expect(count(again, KEYS.t!, 3)).toBe(true);
    const grown = again.encode();
    expect(grown.byteLength).toBe(4 * 28 + 4);
    expect(Buffer.from(grown.subarray(0, 3 * 28)).equals(Buffer.from(blob.subarray(0, 3 * 28)))).toBe(true);
    expect(grown.readUInt32LE(4 * 28)).toBe(KEYS_TRAILER);
  });

  it('keeps a blob of earlier versions (records only) legacy, and writes it back without the mark', () => {
    const blob = Buffer.from(run([['a', 'b']]).bucket.encode().subarray(0, 2 * 28));
    const old = PackedBucket.decode(blob);
    expect(old.legacy).toBe(true);
    expect(count(old, KEYS.c!, 5)).toBe(true);
    expect(old.encode().byteLength).toBe(3 * 28);
  });

  it('refuses a blob that is neither form', () => {
    const blob = run([['a']]).bucket.encode();
    expect(() => PackedBucket.decode(Buffer.concat([blob, Buffer.alloc(1)]))).toThrow(/neither/);
    const wrongMark = Buffer.from(blob);
    wrongMark.writeUInt32LE(0x12345678, 28);
    expect(() => PackedBucket.decode(wrongMark)).toThrow(/neither/);
  });
});

describe('bucketOfHalves', () => {
  it('puts every time in the bucket bucketOf gives, without a bigint for times after 1970', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: 0n, max: 4_102_444_800_000_000_000n }), fc.bigInt({ min: -2n * 10n ** 9n, max: 2n * 10n ** 9n })),
        (ns) => {
          const [lo, hi] = halves(ns);
          expect(bucketOfHalves(lo, hi | 0)).toBe(bucketOf(ns));
        },
      ),
      { numRuns: runs(20_000) },
    );
    // second boundaries
    for (const ns of [0n, 999_999_999n, 1_000_000_000n, T0 - 1n, T0, 2n ** 32n - 1n, 2n ** 32n, 2n ** 48n, 2n ** 63n - 1n]) {
      const [lo, hi] = halves(ns);
      expect(bucketOfHalves(lo, hi | 0)).toBe(bucketOf(ns));
    }
  });
});
