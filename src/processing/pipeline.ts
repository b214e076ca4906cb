//! The processing stages of one model in their order: redaction of each line, multiline
//! grouping, the level and JSON structure (build-record.ts), and the filter.
//! Pure and deterministic like each stage: the same lines and calls give the same records.
import { LEVEL_INDEX, LEVELS, type LineCursor, type ProcessLine } from './types.js';
import type { Redactor } from './redact.js';
import type { FilterInput, RecordFilter } from './filter.js';
import { MultilineGrouper } from './multiline.js';
import type { GroupedRecord, OpenGroupSnapshot } from './grouped-record.js';
import type { MultilineOptions } from './multiline-options.js';
import { detectLevelOnly, type CompiledLevelRules } from './levels.js';
import { mayBeJsonObject } from './json-line.js';
import { buildRecord, inTimeOrder, recordOrder, sortedByTime } from './build-record.js';
import { quickHeading, quickLevel } from './quick-line.js';
import { PendingHeadings, STREAMS } from './pending-headings.js';
import type { Processed, ProcessedRecord, RecordSink } from './record.js';

export type { Processed, ProcessedRecord, RecordSink } from './record.js';

/** The compiled settings of a {@link ModelProcessor}. */
export interface ProcessorOptions {
  /** Multiline grouping (default: the python preset with its defaults); `false`: every line is a record. */
  multiline?: MultilineOptions | false;
  /** User level rules, tried before the built-in patterns. */
  levelRules?: CompiledLevelRules;
  /** Applied to every line's text before anything else reads it. */
  redact?: Redactor;
  /** Decides which records are kept. */
  filter?: RecordFilter;
  /** Counts every record before the filter decides (the records meter): `tally[i]` for level LEVELS[i], `tally[LEVELS.length]` for none. */
  tally?: Float64Array;
  /** The model whose lines these are: the records' `modelId` (default empty). */
  modelId?: string;
}

/** The processing of one model's lines. */
export class ModelProcessor {
  readonly #grouper: MultilineGrouper | undefined;
  readonly #options: ProcessorOptions;
  readonly #modelId: string;
  /** What the filter is given for a line kept compact (one object, reused: filters keep nothing). */
  readonly #filterInput: FilterInput = { log: '', level: undefined };
  /** Whether {@link pushLines} may decide lines on their first bytes (default levels and blocks, no redaction, a filter of levels only). */
  readonly #quick: boolean;
  /** Records made as objects by {@link pushLines}, until handed on (reused). */
  readonly #objects: Processed = { records: [], dropped: 0 };
  /**
   * Logging lines that may head a traceback, decided on their first bytes and held (one per
   * stream at most) until the next line of their stream shows whether a traceback follows,
   * within one {@link pushLines} call: most close alone and are written as their journal line.
   */
  readonly #pending = new PendingHeadings();

  constructor(options: ProcessorOptions = {}) {
    this.#options = options;
    this.#modelId = options.modelId ?? '';
    this.#grouper = options.multiline === false ? undefined : new MultilineGrouper(options.multiline ?? {});
    this.#quick =
      options.redact === undefined &&
      (options.levelRules === undefined || options.levelRules.length === 0) &&
      (options.filter === undefined || options.filter.readsText === false) &&
      (this.#grouper === undefined || this.#grouper.pythonDefault);
  }

  /**
   * Takes one page of lines in any order; they are put in time order (equal times keep their
   * order). Returns the records that closed, in time order.
   */
  push(lines: readonly ProcessLine[]): Processed {
    const out: Processed = { records: [], dropped: 0 };
    const grouper = this.#grouper;
    for (const line of inTimeOrder(lines)) {
      const redacted = this.#redacted(line);
      if (grouper === undefined || grouper.pushSingle(redacted.stream, redacted.timeNs, redacted.log)) this.#single(out, redacted);
      else for (const g of grouper.push(redacted)) this.#group(out, g);
    }
    if (grouper) for (const g of grouper.endPage()) this.#group(out, g);
    return this.#ordered(out);
  }

  /**
   * {@link push} for lines read through a cursor, in time order. A line that is a record alone
   * and, as written, that record with at most a level (not part of a group, not a JSON line,
   * unchanged by redaction) goes to `out` as its index and level, without an object; other
   * records go as objects. The records and their order are those of {@link push} before its
   * sort: the caller puts them in time order. Returns how many records the filter dropped.
   */
  pushLines(lines: LineCursor, out: RecordSink): number {
    const grouper = this.#grouper;
    const redact = this.#options.redact;
    const objects = this.#objects;
    const pending = this.#pending;
    let dropped = 0;
    const quick = this.#quick;
    while (lines.next()) {
      if (quick && lines.logFrom >= 0) {
        const level = quickLevel(lines.bytes, lines.logFrom, lines.logTo);
        if (level >= 0) {
          // A held heading of this stream that this line closes: a record alone, as written.
          if (pending.count > 0 && this.#closePending(lines.stream, lines.timeWords, out)) dropped++;
          if (grouper === undefined || grouper.pushSingleAt(lines.stream, lines.timeWords, lines.index, undefined)) {
            if (this.#keepPlain(out, lines.index, level, '')) dropped++;
            continue;
          }
          // The line after a logging line that may have headed a traceback: that line closes alone.
          const heading = grouper.pushAfterHeadingAt(lines.stream, lines.timeWords, lines.index);
          if (heading !== undefined) {
            this.#group(objects, heading);
            this.#handOn(out);
            if (this.#keepPlain(out, lines.index, level, '')) dropped++;
            continue;
          }
        } else if (grouper !== undefined) {
          const heading = quickHeading(lines.bytes, lines.logFrom, lines.logTo);
          if (heading >= 0) {
            if (pending.count > 0 && this.#closePending(lines.stream, lines.timeWords, out)) dropped++;
            // A heading the grouper holds (from the page before) closes alone: a heading carries no block on.
            const closed = grouper.pushAfterHeadingAt(lines.stream, lines.timeWords, lines.index);
            if (closed !== undefined) {
              this.#group(objects, closed);
              this.#handOn(out);
            }
            // Held here rather than in the grouper while the next lines show whether a traceback follows.
            if (grouper.takesSingleAt(lines.stream, lines.timeWords, lines.index)) {
              pending.hold(lines.stream, lines.index, heading);
              continue;
            }
          }
        }
      }
      if (pending.count > 0) this.#openPending(lines, lines.stream);
      const log = lines.log;
      if ((redact === undefined || redact(log) === log) && !mayBeJsonObject(log) && (grouper === undefined || grouper.pushSingleAt(lines.stream, lines.timeWords, lines.index, log))) {
        if (this.#plain(out, lines.index, log)) dropped++;
        continue;
      }
      const entry = lines.entry();
      const line = this.#redacted(entry);
      if (grouper === undefined || grouper.pushSingle(line.stream, line.timeNs, line.log)) this.#single(objects, line);
      else {
        for (const g of grouper.push(line)) {
          // The line that closed a group, a record alone: compact if it can be.
          if (g.lines.length === 1 && g.lines[0] === entry && g.kind === 'single' && !mayBeJsonObject(log)) {
            this.#handOn(out);
            if (this.#plain(out, lines.index, log)) dropped++;
          } else this.#group(objects, g);
        }
      }
      this.#handOn(out);
    }
    if (pending.count > 0) for (const stream of STREAMS) this.#openPending(lines, stream);
    if (grouper) for (const g of grouper.endPage()) this.#group(objects, g);
    this.#handOn(out);
    dropped += objects.dropped;
    objects.dropped = 0;
    return dropped;
  }

  /**
   * The held heading of `stream`, closed by a line that carries no block on: a record alone,
   * written as its journal line with its level. Returns whether the filter dropped it.
   */
  #closePending(stream: string, words: Int32Array, out: RecordSink): boolean {
    const pending = this.#pending;
    const index = pending.take(stream);
    if (index < 0) return false;
    // The grouper takes it as the record alone it turned out to be (it checked it could).
    if (!this.#grouper!.pushSingleAt(stream, words, index, undefined)) throw new Error('bug: a held heading the grouper no longer takes alone');
    return this.#keepPlain(out, index, pending.level, '', true);
  }

  /** Gives the held heading of `stream` to the grouper, where it opens a group (a line follows that needs its text, or the page ends). */
  #openPending(lines: LineCursor, stream: string): void {
    const index = this.#pending.take(stream);
    if (index < 0) return;
    const closed = this.#grouper!.push(lines.entryAt(index));
    if (closed.length > 0) throw new Error('bug: a held heading closed a group');
  }

  /** The record of a line alone that starts no group, as {@link push} makes it (the line already redacted). */
  recordOf(line: ProcessLine): ProcessedRecord {
    return buildRecord(this.#modelId, this.#options.levelRules, line, line.seq, line.log, 1, line.time, false);
  }

  /** Closes the groups the model's checkpoint (`watermarkNs`) has passed by the maximum gap. */
  advance(watermarkNs: bigint): Processed {
    return this.#finish(this.#grouper?.advance(watermarkNs) ?? []);
  }

  /** Closes every open group (the model stopped, or the end of the input). */
  flush(): Processed {
    return this.#finish(this.#grouper?.flush() ?? []);
  }

  /** The open groups (their lines redacted), to commit with a cursor; see {@link MultilineGrouper.openGroups}. */
  openGroups(): OpenGroupSnapshot[] {
    return this.#grouper?.openGroups() ?? [];
  }

  /** Reopens a group saved by {@link openGroups}, from its lines as the journal holds them (they are redacted again). */
  restore(group: OpenGroupSnapshot): void {
    this.#grouper?.restore({ ...group, lines: group.lines.map((l) => this.#redacted(l)) });
  }

  /** Lines and bytes held in open groups. */
  held(): { lines: number; bytes: number } {
    return this.#grouper?.held() ?? { lines: 0, bytes: 0 };
  }

  /** The lowest seq held in an open group: nothing at or after it may be acknowledged yet. */
  openFirstSeq(): number | undefined {
    return this.#grouper?.openFirstSeq();
  }

  #redacted(line: ProcessLine): ProcessLine {
    const redact = this.#options.redact;
    if (!redact) return line;
    const log = redact(line.log);
    return log === line.log ? line : { ...line, log };
  }

  #finish(groups: readonly GroupedRecord[]): Processed {
    const out: Processed = { records: [], dropped: 0 };
    for (const g of groups) this.#group(out, g);
    return this.#ordered(out);
  }

  #group(out: Processed, g: GroupedRecord): void {
    this.#keep(out, buildRecord(this.#modelId, this.#options.levelRules, g.lines[0]!, g.lastSeq, g.log, g.lineCount, g.timeEnd, g.kind === 'traceback'));
  }

  #single(out: Processed, l: ProcessLine): void {
    this.#keep(out, this.recordOf(l));
  }

  /** A compact record of {@link pushLines}: what {@link recordOf} and {@link #keep} do, without the object. Returns whether the filter dropped it. */
  #plain(out: RecordSink, index: number, log: string): boolean {
    const level = detectLevelOnly(log, this.#options.levelRules);
    return this.#keepPlain(out, index, level === undefined ? LEVELS.length : LEVEL_INDEX[level], log);
  }

  /** {@link #keep} for a compact line at `level` (index in LEVELS; LEVELS.length: none). */
  #keepPlain(out: RecordSink, index: number, level: number, log: string, earlier = false): boolean {
    const tally = this.#options.tally;
    if (tally !== undefined) tally[level]!++;
    const name = LEVELS[level];
    const filter = this.#options.filter;
    if (filter !== undefined) {
      const input = this.#filterInput;
      input.log = log;
      input.level = name;
      const decision = filter(input);
      input.log = '';
      if (decision !== undefined && decision !== 'keep') return true;
    }
    if (earlier) out.earlierLine(index, level);
    else out.line(index, level);
    return false;
  }

  #handOn(out: RecordSink): void {
    const records = this.#objects.records;
    if (records.length === 0) return;
    for (const r of records) out.record(r);
    records.length = 0;
  }

  /** Streams close their groups at different lines: what one call returns is put in time order (records come in it, but for that). */
  #ordered(out: Processed): Processed {
    if (!sortedByTime(out.records)) out.records.sort(recordOrder);
    return out;
  }

  #keep(out: Processed, record: ProcessedRecord): void {
    const tally = this.#options.tally;
    if (tally !== undefined) tally[record.level === undefined ? LEVELS.length : LEVEL_INDEX[record.level]]!++;
    const decision = this.#options.filter?.({ log: record.log, level: record.level });
    if (decision === undefined || decision === 'keep') out.records.push(record);
    else out.dropped++;
  }

}
