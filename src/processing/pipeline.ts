//! The processing stages of one model in their order: redaction of each line, multiline
//! grouping, the level and JSON structure (build-record.ts), and the filter.
//! Pure and deterministic like each stage: the same lines and calls give the same records.
import { LEVEL_INDEX, LEVELS, type Level, type ProcessLine } from './types.js';
import type { Redactor } from './redact.js';
import type { RecordFilter } from './filter.js';
import { MultilineGrouper } from './multiline.js';
import type { GroupedRecord, OpenGroupSnapshot } from './grouped-record.js';
import type { MultilineOptions } from './multiline-options.js';
import type { CompiledLevelRules } from './levels.js';
import { buildRecord, inTimeOrder, recordOrder, sortedByTime } from './build-record.js';
import type { Processed, ProcessedRecord } from './record.js';

export type { Processed, ProcessedRecord } from './record.js';

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
  /** Counts the exception type of every record that has one, before the filter decides. */
  exceptionTally?: Map<string, number>;
  /** The model whose lines these are: the records' `modelId` (default empty). */
  modelId?: string;
}

/** The processing of one model's lines. */
export class ModelProcessor {
  readonly #grouper: MultilineGrouper | undefined;
  readonly #options: ProcessorOptions;
  readonly #modelId: string;

  constructor(options: ProcessorOptions = {}) {
    this.#options = options;
    this.#modelId = options.modelId ?? '';
    this.#grouper = options.multiline === false ? undefined : new MultilineGrouper(options.multiline ?? {});
  }

  /**
   * Takes one page of lines in any order; they are put in time order (equal times keep their
   * order). Returns the records that closed, in time order.
   */
  push(lines: readonly ProcessLine[]): Processed {
    const out: Processed = { records: [], dropped: 0 };
    for (const line of inTimeOrder(lines)) this.pushLine(line, out);
    this.endPage(out);
    return this.#ordered(out);
  }

  /** {@link push}'s step for one line of a page (its lines in time order): the records it closes go to `out`. */
  pushLine(line: ProcessLine, out: Processed): void {
    const grouper = this.#grouper;
    const redacted = this.#redacted(line);
    if (grouper === undefined || grouper.pushSingle(redacted.stream, redacted.timeNs, redacted.log)) this.#keep(out, this.#record(redacted, redacted.seq, redacted.log, 1, redacted.time, false));
    else for (const g of grouper.push(redacted)) this.#group(out, g);
  }

  /** Ends a page given line by line ({@link pushLine}): the groups of its late lines close into `out` (not put in time order). */
  endPage(out: Processed): void {
    if (this.#grouper) for (const g of this.#grouper.endPage()) this.#group(out, g);
  }

  /**
   * {@link pushLine} for a line its caller knows to be, under the built-in rules with nothing
   * redacted, a record alone at `level` that opens no block and is no JSON object (see
   * delivery/processing/fast-lines.ts), when the line would be one here too: its stream holds
   * no open group and it is not late. Counts the record, and asks the filter (which must read
   * levels only). Returns undefined, taking nothing, when the line must go through
   * {@link pushLine}; else whether the filter kept it.
   */
  takeAlone(stream: string, timeNs: bigint, level: Level | undefined): boolean | undefined {
    if (this.#grouper !== undefined && !this.#grouper.pushSingle(stream, timeNs, undefined)) return undefined;
    return this.#decide('', level);
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
    this.#keep(out, this.#record(g.lines[0]!, g.lastSeq, g.log, g.lineCount, g.timeEnd, g.kind === 'traceback'));
  }

  #record(first: ProcessLine, lastSeq: number, log: string, lineCount: number, timeEnd: string, traceback: boolean): ProcessedRecord {
    return buildRecord(this.#modelId, this.#options, first, lastSeq, log, lineCount, timeEnd, traceback);
  }

  /** Streams close their groups at different lines: what one call returns is put in time order (records come in it, but for that). */
  #ordered(out: Processed): Processed {
    if (!sortedByTime(out.records)) out.records.sort(recordOrder);
    return out;
  }

  #keep(out: Processed, record: ProcessedRecord): void {
    const exceptions = this.#options.exceptionTally;
    if (exceptions !== undefined && record.exception !== undefined) exceptions.set(record.exception.type, (exceptions.get(record.exception.type) ?? 0) + 1);
    if (this.#decide(record.log, record.level)) out.records.push(record);
    else out.dropped++;
  }

  /** Counts a record (the records meter) and returns whether the filter keeps it. */
  #decide(log: string, level: Level | undefined): boolean {
    const tally = this.#options.tally;
    if (tally !== undefined) tally[level === undefined ? LEVELS.length : LEVEL_INDEX[level]]!++;
    const decision = this.#options.filter?.({ log, level });
    return decision === undefined || decision === 'keep';
  }
}
