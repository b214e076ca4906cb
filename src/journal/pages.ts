//! Journal pages as sinks read them. A journal row holds the new entries of one fetched
//! page as the NDJSON lines the text sinks write (see records/ndjson.ts), UTF-8 encoded, plus
//! the exact time of each entry. Sinks that write lines take the bytes as they are: no
//! decoding when the row is read, no encoding when it is written out. Entry objects are
//! built only for sinks that ask for them.
import type { SinkEntry } from '../records/entry.js';
import { entryToNdjson } from '../records/ndjson.js';

const NEWLINE = 0x0a;

/** One journal row: consecutive entries of one model. */
export class JournalPage {
  #starts: Int32Array | undefined;
  #entries: SinkEntry[] | undefined;

  constructor(
    readonly firstSeq: number,
    readonly modelId: string,
    readonly fetchedMs: number,
    /** One NDJSON line per entry, in seq order, each ending in `\n`; UTF-8. */
    readonly bytes: Buffer,
    /** Exact time of each entry, nanoseconds since the epoch. */
    readonly timesNs: BigInt64Array,
  ) {}

  get count(): number {
    return this.timesNs.length;
  }

  get lastSeq(): number {
    return this.firstSeq + this.timesNs.length - 1;
  }

  /** Byte offset where each line starts, plus the length at the end. */
  starts(): Int32Array {
    if (this.#starts) return this.#starts;
    const n = this.timesNs.length;
    const starts = new Int32Array(n + 1);
    let at = 0;
    for (let i = 0; i < n; i++) {
      starts[i] = at;
      at = this.bytes.indexOf(NEWLINE, at) + 1;
    }
    starts[n] = this.bytes.length;
    this.#starts = starts;
    return starts;
  }

  /** The lines of entries [from, to) (a view of the page's bytes, not a copy). */
  lines(from: number, to: number): Buffer {
    if (from === 0 && to === this.timesNs.length) return this.bytes;
    const starts = this.starts();
    return this.bytes.subarray(starts[from], starts[to]);
  }

  /** Bytes of the lines of entries [from, to). */
  size(from: number, to: number): number {
    if (from === 0 && to === this.timesNs.length) return this.bytes.length;
    const starts = this.starts();
    return starts[to]! - starts[from]!;
  }

  /** The entries as objects (built once, on first use, and kept with the page). */
  entries(): SinkEntry[] {
    this.#entries ??= this.decode();
    return this.#entries;
  }

  /**
   * Entries [from, to) as objects, built for the caller and not kept (a sink that turns them
   * into records of its own: the page stays small in the page cache).
   */
  decode(from = 0, to = this.count): SinkEntry[] {
    if (this.#entries) return this.#entries.slice(from, to);
    const starts = from === 0 && to === this.count ? undefined : this.starts();
    const text = starts === undefined ? this.bytes.toString('utf8') : this.bytes.toString('utf8', starts[from], starts[to]);
    const out: SinkEntry[] = new Array(to - from);
    let pos = 0;
    for (let i = from; i < to; i++) {
      let end = text.indexOf('\n', pos);
      if (end < 0) end = text.length;
      const line = JSON.parse(text.slice(pos, end)) as { time: string; stream: string; log: string };
      out[i - from] = { seq: this.firstSeq + i, modelId: this.modelId, time: line.time, timeNs: this.timesNs[i]!, stream: line.stream, log: line.log, fetchedAtMs: this.fetchedMs };
      pos = end + 1;
    }
    return out;
  }

  /** A page from entries already decoded (rows written before pages held NDJSON). */
  static fromEntries(firstSeq: number, modelId: string, fetchedMs: number, entries: SinkEntry[]): JournalPage {
    const lines: string[] = new Array(entries.length);
    const times = new BigInt64Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      lines[i] = entryToNdjson(entries[i]!);
      times[i] = entries[i]!.timeNs;
    }
    const page = new JournalPage(firstSeq, modelId, fetchedMs, Buffer.from(lines.join('')), times);
    page.#entries = entries;
    return page;
  }
}

/** Entries [from, to) of a journal page. */
export interface PageSlice {
  page: JournalPage;
  from: number;
  to: number;
}

/** Entries in a list of slices. */
export function sliceCount(slices: readonly PageSlice[]): number {
  return slices.reduce((n, s) => n + s.to - s.from, 0);
}

/** Bytes of NDJSON in a list of slices (the measure of a batch's size). */
export function sliceBytes(slices: readonly PageSlice[]): number {
  return slices.reduce((n, s) => n + s.page.size(s.from, s.to), 0);
}

/** The entries of a list of slices, as objects. */
export function sliceEntries(slices: readonly PageSlice[]): SinkEntry[] {
  if (slices.length === 1 && slices[0]!.from === 0 && slices[0]!.to === slices[0]!.page.count) return slices[0]!.page.entries();
  const out: SinkEntry[] = [];
  for (const s of slices) {
    const all = s.page.entries();
    for (let i = s.from; i < s.to; i++) out.push(all[i]!);
  }
  return out;
}

/** Packs entry times for the journal row (int64 each, in the platform's byte order: little-endian). */
export function packTimes(times: BigInt64Array): Buffer {
  return Buffer.from(times.buffer, times.byteOffset, times.byteLength);
}

/** Unpacks the times written by {@link packTimes}. */
export function unpackTimes(blob: Uint8Array): BigInt64Array {
  // Copied: SQLite's buffer need not be 8-byte aligned.
  const out = new BigInt64Array(blob.byteLength >>> 3);
  new Uint8Array(out.buffer).set(blob.subarray(0, out.byteLength));
  return out;
}
