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
  readonly length: number;
  readonly timesNs: BigInt64Array;
  readonly hashes: Float64Array;
  private readonly entries: readonly LogEntry[];

  /** The page of entries prepared one by one (their times parsed). */
  constructor(prepared: readonly PreparedEntry[]) {
    this.length = prepared.length;
    this.timesNs = BigInt64Array.from(prepared, (p) => p.timeNs);
    this.hashes = Float64Array.from(prepared, (p) => p.hash);
    this.entries = prepared.map((p) => p.entry);
  }

  legacyHash(i: number): number {
    const e = this.entries[i]!;
    return legacyContentHash(e.stream, e.log);
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    return renderEntryLines(modelId, this.entries, kept, n);
  }
}
