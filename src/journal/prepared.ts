//! What the journal commits for a fetched page: each entry's exact time and content hash
//! (computed by the poller), and the NDJSON lines of the entries the dedupe keeps.
import type { LogEntry } from '../records/entry.js';
import { renderEntryLines } from '../records/ndjson.js';
import { legacyContentHash } from '../dedupe/key.js';

/** An entry ready to be committed: parsed time and content hash computed by the caller. */
export interface PreparedEntry {
  entry: LogEntry;
  timeNs: bigint;
  hash: number;
}

/**
 * A fetched page's entries ready to be committed. The poller builds it (poller/prepare.ts),
 * from entry objects or straight from the response body's bytes.
 */
export interface PreparedPage {
  readonly length: number;
  /** Exact time of each entry, nanoseconds since the epoch. */
  readonly timesNs: BigInt64Array;
  /** 53-bit content hash of each entry (see dedupe/key.ts). */
  readonly hashes: Float64Array;
  /**
   * Per entry, the code of why it is off the spec (records/off-spec.ts; 0: on
   * the spec); `undefined` when every entry is on it. An entry without a time of its own
   * (`untimed`) has the window's start as its time and is keyed by its text alone.
   */
  readonly invalid: Uint8Array | undefined;
  /**
   * Entry `i`'s hash as earlier versions computed it (`legacyContentHash`), for dedupe
   * buckets they wrote: computed on demand, since only windows read again soon after an
   * upgrade reach such buckets (never for an entry without a time).
   */
  legacyHash(i: number): number;
  /** The lines `entryToNdjson` writes for the entries at `kept[0..n)`, in that order, UTF-8. */
  render(modelId: string, kept: Uint32Array, n: number): Buffer;
}

/** A prepared page of entry objects, each on the spec. */
export class EntryObjectsPage implements PreparedPage {
  readonly invalid = undefined;

  constructor(
    private readonly entries: readonly LogEntry[],
    readonly timesNs: BigInt64Array,
    readonly hashes: Float64Array,
  ) {}

  legacyHash(i: number): number {
    const e = this.entries[i]!;
    return legacyContentHash(e.stream, e.log);
  }

  /** The page of entries prepared one by one (their times parsed). */
  static of(prepared: readonly PreparedEntry[]): EntryObjectsPage {
    const n = prepared.length;
    const timesNs = new BigInt64Array(n);
    const hashes = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      timesNs[i] = prepared[i]!.timeNs;
      hashes[i] = prepared[i]!.hash;
    }
    return new EntryObjectsPage(prepared.map((p) => p.entry), timesNs, hashes);
  }

  get length(): number {
    return this.entries.length;
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    return renderEntryLines(modelId, this.entries, kept, n);
  }
}
