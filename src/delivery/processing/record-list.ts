//! The records of a batch, in order, most of them without an object: a line that is a record
//! alone, as the journal holds it with at most a level added, is kept as (page, line, level).
//! The file and stdout sinks read the batch's NDJSON only, which copies such a line from its
//! page with the level spliced in; the record objects are made only if a sink reads
//! `entries`, and then equal those the processor makes for the line.
import type { JournalPage } from '../../journal/pages.js';
import type { SinkEntry } from '../../records/entry.js';
import type { ProcessedRecord, RecordSink } from '../../processing/pipeline.js';
import { LEVEL_INDEX, LEVELS, type Level } from '../../processing/types.js';
import { compareTimeWords, copyTimeWords, timeWords } from '../../time/ns-words.js';

/** Makes the record of line `entry` of `page`, kept compact (what the processor's `recordOf` gives). */
export type Materialise = (page: JournalPage, entry: SinkEntry) => SinkEntry;

/** Records in order: compact lines of pages, and objects. */
export class RecordList implements RecordSink {
  // Per record, in columns that hold no pointers (a batch holds up to 20,000 records): its
  // page (index in #known; -1 none), its line there, its level (index in LEVELS; LEVELS.length
  // none), and its object (index in #objectList; -1 none).
  #n = 0;
  #pageOf: Int32Array;
  #at: Int32Array;
  #levels: Uint8Array;
  #objectOf: Int32Array;
  /** Each record's time and first seq (compared when records are put in time order, without a BigInt made). */
  #times: BigInt64Array;
  #seqs: Float64Array;
  /** #times as 32-bit words (see time/ns-words.ts), compared without making BigInts. */
  #timeWords: Int32Array;
  readonly #moved = new Int32Array(2);
  readonly #objectList: SinkEntry[] = [];
  readonly #materialise: Materialise | undefined;
  readonly #journaled: boolean;
  /** The pages read so far ({@link readFrom}). */
  readonly #known: JournalPage[] = [];
  /** The page {@link line} takes its lines from (index in #known; -1: none). */
  #page = -1;
  /** The first record of the current call over a page ({@link readFrom}), which {@link record} puts in time order. */
  #orderFrom = Number.POSITIVE_INFINITY;
  #lines = 0;
  #entries: SinkEntry[] | undefined;

  /**
   * `materialise` makes the objects of compact lines; a list without it holds objects only.
   * `journaled`: the records' text is their lines' as the journal holds it (no redaction), so
   * that a record of one line with nothing added but a level is written from its page.
   * `capacity`: how many records to make room for at once (the lines of the batch).
   */
  constructor(materialise?: Materialise, journaled = false, capacity = 256) {
    this.#materialise = materialise;
    this.#journaled = journaled;
    const n = Math.max(16, capacity);
    this.#pageOf = new Int32Array(n);
    this.#at = new Int32Array(n);
    this.#levels = new Uint8Array(n);
    this.#objectOf = new Int32Array(n);
    this.#times = new BigInt64Array(n);
    this.#timeWords = timeWords(this.#times);
    this.#seqs = new Float64Array(n);
  }

  /** A list of these records. */
  static of(records: readonly SinkEntry[]): RecordList {
    const list = new RecordList();
    for (const r of records) list.record(r);
    return list;
  }

  /** Records in the list. */
  get length(): number {
    return this.#n;
  }

  /** Lines the records hold. */
  get lines(): number {
    return this.#lines;
  }

  /**
   * Starts a call of the processor over `page`'s lines (in time order): {@link line} takes
   * them from the page, and the records it adds are put in time order among themselves (equal
   * times by seq), as the processor orders what one call gives.
   */
  readFrom(page: JournalPage): void {
    if (this.#known[this.#known.length - 1] !== page) this.#known.push(page);
    this.#page = this.#known.length - 1;
    this.#orderFrom = this.#n;
  }

  /** Ends the current call: records added next are not ordered among its records. */
  endCall(): void {
    this.#page = -1;
    this.#orderFrom = Number.POSITIVE_INFINITY;
  }

  line(index: number, level: number): void {
    this.#compact(index, level);
    // Lines come in time order, and a group closes after its first line: only an object just before can come later.
    const before = this.#n - 2;
    if (before >= this.#orderFrom && this.#objectOf[before]! >= 0) this.#place();
  }

  earlierLine(index: number, level: number): void {
    this.#compact(index, level);
    if (this.#n - 1 > this.#orderFrom) this.#place();
  }

  /** Adds line `index` of the current call's page, kept compact, at the end. */
  #compact(index: number, level: number): void {
    if (this.#materialise === undefined || this.#page < 0) throw new Error('bug: a compact line outside a call over a page');
    this.#push(this.#page, index, level, -1);
    this.#lines++;
  }

  record(record: ProcessedRecord | SinkEntry): void {
    const object = this.#objectList.push(record) - 1;
    // A record that is its journal line with at most a level (a logging line no traceback
    // followed) is written as a compact line is; its object is kept for `entries`.
    const page = this.#journaled ? this.#pageHolding(record) : -1;
    if (page < 0) this.#push(-1, 0, LEVELS.length, object);
    else this.#push(page, record.seq - this.#known[page]!.firstSeq, record.level === undefined ? LEVELS.length : LEVEL_INDEX[record.level], object);
    this.#lines += record.lines ?? 1;
    if (this.#n - 1 > this.#orderFrom) this.#place();
  }

  /** The page of this list holding `record`'s line (index in #known), when the record is that line with at most a level; else -1. */
  #pageHolding(record: SinkEntry): number {
    if (record.lines !== undefined || record.message !== undefined || record.attributes !== undefined || record.traceId !== undefined || record.spanId !== undefined) return -1;
    const pages = this.#known;
    for (let i = pages.length - 1; i >= 0; i--) {
      const page = pages[i]!;
      if (record.seq >= page.firstSeq && record.seq <= page.lastSeq && page.modelId === record.modelId) return i;
    }
    return -1;
  }

  /** The page of record `k` when it is written from its page, else undefined. */
  page(k: number): JournalPage | undefined {
    const i = this.#pageOf[k]!;
    return i < 0 ? undefined : this.#known[i];
  }

  /** Record `k` when it is written as an object (undefined for a line written from its page). */
  object(k: number): SinkEntry | undefined {
    return this.#pageOf[k]! < 0 ? this.#objectList[this.#objectOf[k]!] : undefined;
  }

  /** The line index in its page of record `k` written from its page. */
  index(k: number): number {
    return this.#at[k]!;
  }

  /** The level of record `k` written from its page. */
  level(k: number): Level | undefined {
    return LEVELS[this.#levels[k]!];
  }

  /** The level of record `k` written from its page, as its index in LEVELS (LEVELS.length: none). */
  levelIndex(k: number): number {
    return this.#levels[k]!;
  }

  modelId(k: number): string {
    return this.page(k)?.modelId ?? this.#objectList[this.#objectOf[k]!]!.modelId;
  }

  /** The seq of record `k`'s first line. */
  seq(k: number): number {
    return this.#seqs[k]!;
  }

  timeNs(k: number): bigint {
    return this.#times[k]!;
  }

  fetchedAtMs(k: number): number {
    return this.page(k)?.fetchedMs ?? this.#objectList[this.#objectOf[k]!]!.fetchedAtMs;
  }

  /** The records as objects (made on the first call). */
  entries(): SinkEntry[] {
    if (this.#entries !== undefined) return this.#entries;
    const decoded = new Map<JournalPage, SinkEntry[]>();
    const out: SinkEntry[] = new Array(this.#n);
    for (let k = 0; k < out.length; k++) {
      const object = this.#objectOf[k]!;
      if (object >= 0) {
        out[k] = this.#objectList[object]!;
        continue;
      }
      const page = this.page(k)!;
      let lines = decoded.get(page);
      if (lines === undefined) decoded.set(page, (lines = page.decode()));
      out[k] = this.#materialise!(page, lines[this.#at[k]!]!);
    }
    this.#entries = out;
    return out;
  }

  #push(page: number, at: number, level: number, object: number): void {
    if (this.#n === this.#at.length) this.#grow();
    const k = this.#n++;
    this.#pageOf[k] = page;
    this.#at[k] = at;
    this.#levels[k] = level;
    this.#objectOf[k] = object;
    if (object >= 0) {
      const record = this.#objectList[object]!;
      this.#times[k] = record.timeNs;
      this.#seqs[k] = record.seq;
    } else {
      const p = this.#known[page]!;
      this.#times[k] = p.timesNs[at]!;
      this.#seqs[k] = p.firstSeq + at;
    }
    this.#entries = undefined;
  }

  #grow(): void {
    const grown = <T extends Int32Array | Uint8Array | BigInt64Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(a.length * 2);
      b.set(a as never);
      return b;
    };
    this.#pageOf = grown(this.#pageOf);
    this.#at = grown(this.#at);
    this.#levels = grown(this.#levels);
    this.#objectOf = grown(this.#objectOf);
    this.#times = grown(this.#times);
    this.#timeWords = timeWords(this.#times);
    this.#seqs = grown(this.#seqs);
  }

  /** Moves the last record back past the records of the current call that come after it in time (a stable insertion). */
  #place(): void {
    const last = this.#n - 1;
    const words = this.#timeWords;
    const seqs = this.#seqs;
    let k = last;
    while (k > this.#orderFrom) {
      const order = compareTimeWords(words, k - 1, words, last);
      if (order < 0 || (order === 0 && seqs[k - 1]! <= seqs[last]!)) break;
      k--;
    }
    if (k === last) return;
    rotate(this.#pageOf, k, last);
    rotate(this.#at, k, last);
    rotate(this.#objectOf, k, last);
    rotate(this.#levels, k, last);
    rotate(seqs, k, last);
    // The times move as words: a BigInt read out would be an object made.
    const moved = this.#moved;
    copyTimeWords(words, last, moved, 0);
    this.#times.copyWithin(k + 1, k, last);
    copyTimeWords(moved, 0, words, k);
  }
}

/** Moves element `last` of `column` to `k`, the elements [k, last) one up. */
function rotate(column: Int32Array | Uint8Array | Float64Array, k: number, last: number): void {
  const moved = column[last]!;
  column.copyWithin(k + 1, k, last);
  column[k] = moved;
}
