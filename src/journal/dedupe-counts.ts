//! The occurrence counts of a page commit (see dedupe/): each entry of a fetched page is
//! counted against the stored bucket of its second, and kept only when it is a copy more
//! than any single fetch has shown before. One pass over the page, no object or `bigint`
//! per entry; the buckets are read once per page and written back in its transaction.
import type Database from 'better-sqlite3';
import { untimed } from '../records/off-spec.js';
import { BUCKET_MS, PackedBucket, bucketOfHalves, hashWords, untimedBucket } from '../dedupe/buckets.js';
import type { StateDb } from './db.js';
import type { PreparedPage } from './prepared.js';

/** What the counts kept of a page, and the buckets to write back. */
export interface CountedPage {
  /** Page indexes of the entries kept, in page order: the first `n` are set. */
  readonly kept: Uint32Array;
  /** Times of the entries kept: the first `n` are set. */
  readonly times: BigInt64Array;
  readonly n: number;
  readonly duplicates: number;
  /** Page index of the entry with the newest time; -1 for an empty page. */
  readonly latest: number;
  readonly buckets: Map<number, PackedBucket>;
  /** Start of the earliest bucket the page reached (Infinity for an empty page). */
  readonly earliestBucketMs: number;
}

/** The dedupe table: occurrence counts packed per model and second of entry time. */
export class DedupeCounts {
  private readonly getBucket: Database.Statement;
  private readonly putBucket: Database.Statement;
  private readonly prune: Database.Statement;

  constructor(private readonly state: StateDb) {
    const db = state.db;
    this.getBucket = db.prepare('SELECT keys FROM dedupe WHERE model_id = ? AND bucket_ms = ?').pluck(true);
    this.putBucket = db.prepare(
      `INSERT INTO dedupe (model_id, bucket_ms, touched_ms, keys) VALUES (?, ?, ?, ?)
       ON CONFLICT (model_id, bucket_ms) DO UPDATE SET keys = excluded.keys, touched_ms = max(touched_ms, excluded.touched_ms)`,
    );
    this.prune = db.prepare('DELETE FROM dedupe WHERE model_id = ? AND bucket_ms < ? AND touched_ms < ?');
  }

  /** Counts the entries of a page of fetch `fetchId` (inside the page's transaction). */
  count(modelId: string, fetchId: number, page: PreparedPage): CountedPage {
    const count = page.length;
    const { timesNs, hashes, invalid } = page;
    // Times as the halves of their int64: no bigint per entry on the way through the dedupe.
    const halves = new Uint32Array(timesNs.buffer, timesNs.byteOffset, 2 * count);
    const kept = new Uint32Array(count);
    const times = new BigInt64Array(count);
    const keptHalves = new Uint32Array(times.buffer);
    const buckets = new Map<number, PackedBucket>();
    let earliestBucketMs = Infinity;
    let bucketMs = NaN;
    let bucket: PackedBucket | undefined;
    let latest = -1;
    let n = 0;
    let duplicates = 0;
    for (let i = 0; i < count; i++) {
      const lo = halves[2 * i]!;
      const hi = halves[2 * i + 1]!;
      if (latest < 0 || (hi | 0) > (halves[2 * latest + 1]! | 0) || ((hi | 0) === (halves[2 * latest + 1]! | 0) && lo > halves[2 * latest]!)) latest = i;
      // An entry without a time is keyed by its text alone (time 0), in its own bucket.
      const textOnly = invalid !== undefined && untimed(invalid[i]!);
      const b = textOnly ? untimedBucket(hashes[i]!) : bucketOfHalves(lo, hi | 0);
      if (b !== bucketMs) {
        bucketMs = b;
        bucket = buckets.get(b);
        if (!bucket) {
          // Room for the rest of the page: a page of one busy second then never regrows the bucket.
          bucket = PackedBucket.decode(this.getBucket.get(modelId, b) as Uint8Array | undefined, textOnly ? 1 : count - i);
          buckets.set(b, bucket);
          if (b < earliestBucketMs) earliestBucketMs = b;
        }
      }
      // A bucket written before the current content hash keeps the hash it was keyed by.
      const h = hashWords(bucket!.legacy ? page.legacyHash(i) : hashes[i]!);
      const record = textOnly ? bucket!.find(0, 0, h[0]!, h[1]!, fetchId) : bucket!.find(lo, hi, h[0]!, h[1]!, fetchId);
      if (bucket!.count(record, fetchId)) {
        kept[n] = i;
        keptHalves[2 * n] = lo;
        keptHalves[2 * n + 1] = hi;
        n++;
      } else {
        duplicates++;
      }
    }
    return { kept, times, n, duplicates, latest, buckets, earliestBucketMs };
  }

  /**
   * Writes back the buckets of a counted page (inside its transaction). A bucket reaching
   * before the window holds keys the service returned although they were not asked for,
   * and may return again with any later window: it counts as touched at `windowEndMs`, so
   * pruning keeps it until lookback after the last window that returned it. So does the
   * bucket of an entry without a time (below every window), which no window can return
   * again once none can reach the windows that did. Buckets inside the window keep its
   * start and go as soon as no window can reach them.
   */
  write(modelId: string, counted: CountedPage, windowFromMs: number, windowEndMs: number): void {
    for (const [b, bucket] of counted.buckets) this.putBucket.run(modelId, b, b < windowFromMs ? windowEndMs : windowFromMs, bucket.encode());
  }

  /**
   * Forgets dedupe keys that no future window can reach: buckets wholly older than the
   * horizon, unless a window returned them lately (a bucket dated before the window that
   * returned it counts as touched at that window's end). Returns the buckets removed.
   */
  pruneKeys(modelId: string, horizonMs: number): number {
    this.state.assertWritable();
    const h = Math.floor(horizonMs);
    return this.prune.run(modelId, h - BUCKET_MS, h).changes;
  }
}
