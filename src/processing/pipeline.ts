//! The processing stages of one model in their order: redaction of each line, multiline
//! grouping, the level (from a JSON line's level field, else from the start of the text;
//! a traceback without a level of its own is an error), JSON structure, and the filter.
//! Pure and deterministic like each stage: the same lines and calls give the same records.
import type { SinkEntry } from '../records/entry.js';
import type { Level, ProcessLine } from './types.js';
import type { Redactor } from './redact.js';
import type { RecordFilter } from './filter.js';
import { MultilineGrouper, type GroupedRecord, type MultilineOptions, type OpenGroupSnapshot } from './multiline.js';
import { detectLevel, levelFromJsonObject, type CompiledLevelRules } from './levels.js';
import { parseJsonLine } from './json-line.js';

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
  /** Called with every record's level (undefined: none) before the filter decides (the records meter). */
  onRecord?: (level: Level | undefined) => void;
  /** The model whose lines these are: the records' `modelId` (default empty). */
  modelId?: string;
}

/**
 * One record after processing. It is also the record as sinks receive it (a
 * {@link SinkEntry}: `seq` is its first line's, `modelId` the processor's).
 */
export interface ProcessedRecord extends SinkEntry {
  /** The first line's time string, unchanged, and its exact time. */
  time: string;
  timeNs: bigint;
  /** The last line's time string, for a record of several lines. */
  timeEnd?: string;
  stream: string;
  /** The text after redaction: the lines joined by `\n`; for a JSON line, the line as written. */
  log: string;
  /** How many lines the record holds, when more than one. */
  lines?: number;
  /** The detected level; absent when the text names none. */
  level?: Level;
  /** The level as the line wrote it (OTLP `severityText`). */
  levelText?: string;
  /** A JSON line's message (`message`, `msg` or `event`). */
  message?: string;
  /** A JSON line's other fields. */
  attributes?: Record<string, unknown>;
  traceId?: string;
  spanId?: string;
  /** Seqs of the record's first and last lines. */
  firstSeq: number;
  lastSeq: number;
}

/** Records that came out of a call, and how many records the filter dropped. */
export interface Processed {
  records: ProcessedRecord[];
  dropped: number;
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
    const grouper = this.#grouper;
    for (const line of inTimeOrder(lines)) {
      const redacted = this.#redacted(line);
      if (grouper === undefined || grouper.pushSingle(redacted)) this.#single(out, redacted);
      else for (const g of grouper.push(redacted)) this.#group(out, g);
    }
    if (grouper) for (const g of grouper.endPage()) this.#group(out, g);
    return this.#ordered(out);
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

  #single(out: Processed, l: ProcessLine): void {
    this.#keep(out, this.#record(l, l.seq, l.log, 1, l.time, false));
  }

  /** Streams close their groups at different lines: what one call returns is put in time order (records come in it, but for that). */
  #ordered(out: Processed): Processed {
    if (!sortedByTime(out.records)) out.records.sort(recordOrder);
    return out;
  }

  #keep(out: Processed, record: ProcessedRecord): void {
    this.#options.onRecord?.(record.level);
    const decision = this.#options.filter?.({ log: record.log, level: record.level });
    if (decision === undefined || decision === 'keep') out.records.push(record);
    else out.dropped++;
  }

  #record(first: ProcessLine, lastSeq: number, log: string, lineCount: number, timeEnd: string, traceback: boolean): ProcessedRecord {
    const record: ProcessedRecord = {
      seq: first.seq,
      modelId: this.#modelId,
      time: first.time,
      timeNs: first.timeNs,
      stream: first.stream,
      log,
      fetchedAtMs: first.fetchedAtMs ?? 0,
      firstSeq: first.seq,
      lastSeq,
    };
    if (lineCount > 1) {
      record.lines = lineCount;
      record.timeEnd = timeEnd;
    }
    const json = lineCount === 1 ? parseJsonLine(log) : undefined;
    let level = json?.levelField ? levelFromJsonObject({ [json.levelField.key]: json.levelField.value }) : undefined;
    level ??= detectLevel(first.log, this.#options.levelRules);
    if (level === undefined && traceback) level = { level: 'error', text: 'ERROR' };
    if (level) {
      record.level = level.level;
      record.levelText = level.text;
    }
    if (json) {
      if (json.message !== undefined) record.message = json.message;
      if (Object.keys(json.attributes).length > 0) record.attributes = json.attributes;
      if (json.traceId) record.traceId = json.traceId;
      if (json.spanId) record.spanId = json.spanId;
    }
    return record;
  }
}

function recordOrder(a: ProcessedRecord, b: ProcessedRecord): number {
  return a.timeNs < b.timeNs ? -1 : a.timeNs > b.timeNs ? 1 : a.firstSeq - b.firstSeq;
}

function sortedByTime(records: readonly ProcessedRecord[]): boolean {
  for (let i = 1; i < records.length; i++) if (recordOrder(records[i - 1]!, records[i]!) > 0) return false;
  return true;
}

/** The lines in time order, equal times in their given order; the array itself when it is in order already (the usual page). */
function inTimeOrder(lines: readonly ProcessLine[]): readonly ProcessLine[] {
  let sorted = true;
  for (let i = 1; i < lines.length && sorted; i++) sorted = lines[i - 1]!.timeNs <= lines[i]!.timeNs;
  if (sorted) return lines;
  const index = lines.map((_, i) => i);
  index.sort((a, b) => (lines[a]!.timeNs < lines[b]!.timeNs ? -1 : lines[a]!.timeNs > lines[b]!.timeNs ? 1 : a - b));
  return index.map((i) => lines[i]!);
}

