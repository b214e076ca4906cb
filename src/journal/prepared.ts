//! What the journal commits for a fetched page: each entry's exact time and content hash
//! (computed by the poller), and the NDJSON lines of the entries the dedupe keeps.
import type { LogEntry } from '../api/types.js';
import { NdjsonLineBuilder } from '../sinks/format.js';

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
  /** The lines `entryToNdjson` writes for the entries at `kept[0..n)`, in that order, UTF-8. */
  render(modelId: string, kept: Uint32Array, n: number): Buffer;
}

/** A prepared page of entry objects. */
export class EntryObjectsPage implements PreparedPage {
  constructor(
    private readonly entries: readonly LogEntry[],
    readonly timesNs: BigInt64Array,
    readonly hashes: Float64Array,
  ) {}

  /** The page of entries prepared one by one. */
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
    const lines = new NdjsonLineBuilder(modelId);
    // Pieces joined once at the end: a string grown line by line is a rope that every reader would flatten.
    const text: string[] = [];
    for (let k = 0; k < n; k++) {
      const e = this.entries[kept[k]!]!;
      lines.push(text, e.time, e.stream, e.log);
    }
    return Buffer.from(text.join(''));
  }
}

/**
 * A prepared page whose lines were rendered in advance for every entry, in order (on
 * another thread: see poller/prepare-pool.ts). Rendering the kept entries is then the
 * lines as they are when every entry is new, else a copy of the kept ones.
 */
export class RenderedPage implements PreparedPage {
  constructor(
    readonly modelId: string,
    readonly timesNs: BigInt64Array,
    readonly hashes: Float64Array,
    /** The line of every entry, in order. */
    private readonly lines: Buffer,
    /** `ends[i]` is where entry i's line ends in `lines`. */
    private readonly ends: Uint32Array,
  ) {}

  get length(): number {
    return this.ends.length;
  }

  render(modelId: string, kept: Uint32Array, n: number): Buffer {
    if (modelId !== this.modelId) throw new Error(`page rendered for model ${JSON.stringify(this.modelId)}, committed for ${JSON.stringify(modelId)}`);
    const ends = this.ends;
    // `kept` is increasing, so keeping as many entries as there are means keeping them all.
    if (n === ends.length) return this.lines;
    let size = 0;
    for (let k = 0; k < n; k++) {
      const i = kept[k]!;
      size += ends[i]! - (i === 0 ? 0 : ends[i - 1]!);
    }
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (let k = 0; k < n; k++) {
      const i = kept[k]!;
      at += this.lines.copy(out, at, i === 0 ? 0 : ends[i - 1]!, ends[i]!);
    }
    return out;
  }
}
