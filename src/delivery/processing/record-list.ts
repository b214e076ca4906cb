//! The records of a batch, in order, most of them without an object: a line that is a record
//! alone, as the journal holds it with at most a level added, is kept as (page, line, level).
//! The file and stdout sinks read the batch's NDJSON only, which copies such a line from its
//! page with the level spliced in; the record objects are made only if a sink reads
//! `entries`, and then equal those the processor makes for the line.
import type { JournalPage } from '../../journal/pages.js';
import type { SinkEntry } from '../../records/entry.js';
import type { ProcessedRecord, RecordSink } from '../../processing/pipeline.js';
import { LEVEL_INDEX, LEVELS, type Level } from '../../processing/types.js';

/** Makes the record of line `entry` of `page`, kept compact (what the processor's `recordOf` gives). */
export type Materialise = (page: JournalPage, entry: SinkEntry) => SinkEntry;

/** Records in order: compact lines of pages, and objects. */
export class RecordList implements RecordSink {
  /** Per record: the page of a compact line (else undefined), its index there, its level (index in LEVELS; LEVELS.length: none). */
  readonly #pages: Array<JournalPage | undefined> = [];
  readonly #at: number[] = [];
  readonly #levels: number[] = [];
  /** Per record: the object, for a record made as one (or made from its compact line). */
  readonly #objects: Array<SinkEntry | undefined> = [];
  readonly #materialise: Materialise | undefined;
  readonly #journaled: boolean;
  /** The pages read so far ({@link readFrom}). */
  readonly #known: JournalPage[] = [];
  /** The page {@link line} takes its lines from. */
  #page: JournalPage | undefined;
  /** The first record of the current call over a page ({@link readFrom}), which {@link record} puts in time order. */
  #orderFrom = Number.POSITIVE_INFINITY;
  #lines = 0;
  #entries: SinkEntry[] | undefined;

  /**
   * `materialise` makes the objects of compact lines; a list without it holds objects only.
   * `journaled`: the records' text is their lines' as the journal holds it (no redaction), so
   * that a record of one line with nothing added but a level is written from its page.
   */
  constructor(materialise?: Materialise, journaled = false) {
    this.#materialise = materialise;
    this.#journaled = journaled;
  }

  /** A list of these records. */
  static of(records: readonly SinkEntry[]): RecordList {
    const list = new RecordList();
    for (const r of records) list.record(r);
    return list;
  }

  /** Records in the list. */
  get length(): number {
    return this.#pages.length;
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
    this.#page = page;
    if (this.#known[this.#known.length - 1] !== page) this.#known.push(page);
    this.#orderFrom = this.length;
  }

  /** Ends the current call: records added next are not ordered among its records. */
  endCall(): void {
    this.#page = undefined;
    this.#orderFrom = Number.POSITIVE_INFINITY;
  }

  line(index: number, level: number): void {
    const page = this.#page;
    if (this.#materialise === undefined || page === undefined) throw new Error('bug: a compact line outside a call over a page');
    this.#push(page, index, level, undefined);
    this.#lines++;
    // Lines come in time order, and a group closes after its first line: only an object just before can come later.
    if (this.length - 2 >= this.#orderFrom && this.#pages[this.length - 2] === undefined) this.#place(page.timesNs[index]!, page.firstSeq + index);
  }

  record(record: ProcessedRecord | SinkEntry): void {
    // A record that is its journal line with at most a level (a logging line no traceback
    // followed) is written as a compact line is; its object is kept for `entries`.
    const page = this.#journaled ? this.#pageOf(record) : undefined;
    if (page === undefined) this.#push(undefined, 0, LEVELS.length, record);
    else this.#push(page, record.seq - page.firstSeq, record.level === undefined ? LEVELS.length : LEVEL_INDEX[record.level], record);
    this.#lines += record.lines ?? 1;
    if (this.length - 1 > this.#orderFrom) this.#place(record.timeNs, record.seq);
  }

  /** The page of this list holding `record`'s line, when the record is that line with at most a level. */
  #pageOf(record: SinkEntry): JournalPage | undefined {
    if (record.lines !== undefined || record.message !== undefined || record.attributes !== undefined || record.traceId !== undefined || record.spanId !== undefined) return undefined;
    const pages = this.#known;
    for (let i = pages.length - 1; i >= 0; i--) {
      const page = pages[i]!;
      if (record.seq >= page.firstSeq && record.seq <= page.lastSeq && page.modelId === record.modelId) return page;
    }
    return undefined;
  }

  /** The page of record `k` when it is a compact line, else undefined. */
  page(k: number): JournalPage | undefined {
    return this.#pages[k];
  }

  /** Record `k` when it is written as an object (undefined for a line written from its page). */
  object(k: number): SinkEntry | undefined {
    return this.#pages[k] === undefined ? this.#objects[k] : undefined;
  }

  /** The line index in its page of compact record `k`. */
  index(k: number): number {
    return this.#at[k]!;
  }

  /** The level of compact record `k`. */
  level(k: number): Level | undefined {
    return LEVELS[this.#levels[k]!];
  }

  /** The level of compact record `k` as its index in LEVELS (LEVELS.length: none). */
  levelIndex(k: number): number {
    return this.#levels[k]!;
  }

  modelId(k: number): string {
    return this.#pages[k]?.modelId ?? this.#objects[k]!.modelId;
  }

  /** The seq of record `k`'s first line. */
  seq(k: number): number {
    const page = this.#pages[k];
    return page === undefined ? this.#objects[k]!.seq : page.firstSeq + this.#at[k]!;
  }

  timeNs(k: number): bigint {
    const page = this.#pages[k];
    return page === undefined ? this.#objects[k]!.timeNs : page.timesNs[this.#at[k]!]!;
  }

  fetchedAtMs(k: number): number {
    return this.#pages[k]?.fetchedMs ?? this.#objects[k]!.fetchedAtMs;
  }

  /** The records as objects (made on the first call). */
  entries(): SinkEntry[] {
    if (this.#entries !== undefined) return this.#entries;
    const decoded = new Map<JournalPage, SinkEntry[]>();
    const out: SinkEntry[] = new Array(this.length);
    for (let k = 0; k < out.length; k++) {
      const object = this.#objects[k];
      if (object !== undefined) {
        out[k] = object;
        continue;
      }
      const page = this.#pages[k]!;
      let lines = decoded.get(page);
      if (lines === undefined) decoded.set(page, (lines = page.decode()));
      out[k] = this.#materialise!(page, lines[this.#at[k]!]!);
    }
    this.#entries = out;
    return out;
  }

  #push(page: JournalPage | undefined, at: number, level: number, object: SinkEntry | undefined): void {
    this.#pages.push(page);
    this.#at.push(at);
    this.#levels.push(level);
    this.#objects.push(object);
    this.#entries = undefined;
  }

  /** Moves the last record back past the records of the current call that come after it in time (a stable insertion). */
  #place(timeNs: bigint, seq: number): void {
    const last = this.length - 1;
    let k = last;
    while (k > this.#orderFrom) {
      const t = this.timeNs(k - 1);
      if (t < timeNs || (t === timeNs && this.seq(k - 1) <= seq)) break;
      k--;
    }
    if (k === last) return;
    for (const column of [this.#pages, this.#at, this.#levels, this.#objects] as unknown[][]) column.splice(k, 0, column.pop());
  }
}
