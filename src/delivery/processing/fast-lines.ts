//! The one fast path of processing, beside the plain one (ModelProcessor.pushLine), for the
//! default settings only: a line whose journal text starts with `INFO `, `DEBUG:`,
//! `WARNING: `… (a level word that cannot head a traceback, then `:` or a space) is, under the
//! built-in rules, a record alone: the line as written plus its level. Such a line is decided
//! on its bytes, kept as a {@link FastLine}, and written to files as its journal line with
//! the level added; it is decoded into its record only if a sink reads records. Every other
//! line goes through the plain path. It stays only because without it the daemon's end-to-end
//! rate with the default settings falls by more than a fifth (docs/processing.md, Cost); a
//! property test holds both paths to the same records and the same NDJSON
//! (test/delivery/processing/fast-lines.test.ts).
import type { JournalPage } from '../../journal/pages.js';
import type { SinkEntry } from '../../records/entry.js';
import { buildRecord, recordOrder, sortedByTime } from '../../processing/build-record.js';
import type { ModelProcessor, Processed, ProcessedRecord } from '../../processing/pipeline.js';
import { LEVEL_WORDS, levelFromWord } from '../../processing/level-words.js';
import { LEVELS, type Level } from '../../processing/types.js';

/** The level words that cannot head a traceback (ERROR, CRITICAL, FATAL, EXCEPTION and ERR start with E, C, F), by first letter. */
const WORDS_BY_FIRST: ReadonlyArray<ReadonlyArray<[Buffer, Level]> | undefined> = Array.from({ length: 26 }, (_, i) => {
  const letter = String.fromCharCode(65 + i);
  if ('ECF'.includes(letter)) return undefined;
  const words = LEVEL_WORDS.filter((w) => w[0] === letter).map((w): [Buffer, Level] => [Buffer.from(w), levelFromWord(w)!]);
  return words.length > 0 ? words : undefined;
});

/**
 * The level of a line whose text, bytes [from, to) of `b` in the journal's form, starts with
 * one of those words and then `:` or a space; undefined for any other line. Such a line is a
 * record alone at that level (the first built-in preset, `${W}(?=[:\s])`, in its order of
 * words), opens no block, and is no JSON object.
 */
export function fastLevel(b: Buffer, from: number, to: number): Level | undefined {
  const words = WORDS_BY_FIRST[b[from]! - 65];
  if (words === undefined || from >= to) return undefined;
  for (const [word, level] of words) {
    const end = from + word.length;
    if (end < to && (b[end] === 0x3a || b[end] === 0x20) && startsWith(b, from, word)) return level;
  }
  return undefined;
}

const STDOUT = Buffer.from(',"stream":"stdout","log":"');
const STDERR = Buffer.from(',"stream":"stderr","log":"');
/** A journal line's end after its text: the closing quote, `}` and the newline. */
const END = Buffer.from('"}\n');
/** What a line's closing `"}\n` becomes with each level. */
const LEVEL_ENDS = new Map(LEVELS.map((l) => [l, Buffer.from(`","level":"${l}"}\n`)]));

/** A record that is its journal line plus a level: line `index` of `page`. */
export class FastLine {
  readonly firstSeq: number;
  readonly timeNs: bigint;

  constructor(
    readonly page: JournalPage,
    readonly index: number,
    readonly level: Level,
    timeNs: bigint,
  ) {
    this.firstSeq = page.firstSeq + index;
    this.timeNs = timeNs;
  }

  get seq(): number {
    return this.firstSeq;
  }

  get modelId(): string {
    return this.page.modelId;
  }

  get fetchedAtMs(): number {
    return this.page.fetchedMs;
  }

  /** The record, as the plain path makes it for the line. */
  record(): SinkEntry {
    const line = this.page.decode(this.index, this.index + 1)[0]!;
    return buildRecord(line.modelId, {}, line, line.seq, line.log, 1, line.time, false);
  }

  /** Bytes of the record's NDJSON line. */
  get size(): number {
    const starts = this.page.starts();
    return starts[this.index + 1]! - starts[this.index]! - END.length + LEVEL_ENDS.get(this.level)!.length;
  }

  /** Writes the record's NDJSON line (the journal line, the level before its `}`) to `target` at `at`; returns the bytes written. */
  copyTo(target: Buffer, at: number): number {
    const starts = this.page.starts();
    const body = this.page.bytes.copy(target, at, starts[this.index]!, starts[this.index + 1]! - END.length);
    return body + LEVEL_ENDS.get(this.level)!.copy(target, at + body);
  }
}

/** What the stage keeps of a processed batch: records, and lines decided on their bytes. */
export type BatchRecord = SinkEntry | FastLine;

/** The record of `r`, made from its line if need be. */
export function recordOf(r: BatchRecord): SinkEntry {
  return r instanceof FastLine ? r.record() : r;
}

/**
 * Lines [from, to) of `page` (in time order) through `processor` as {@link ModelProcessor.push}
 * takes them, the lines {@link fastLevel} decides kept as {@link FastLine}s: the call's records
 * go to `out` in push's order. Only for processing with the built-in rules, nothing
 * redacted, and a filter of levels only. Returns how many records the filter dropped.
 */
export function pushFast(processor: ModelProcessor, page: JournalPage, from: number, to: number, out: BatchRecord[]): number {
  const plain: Processed = { records: [], dropped: 0 };
  const fast: FastLine[] = [];
  let dropped = 0;
  const starts = page.starts();
  const b = page.bytes;
  // `{"model_id":"…","time":"`: where each line's time string starts.
  const head = Buffer.byteLength(`{"model_id":${JSON.stringify(page.modelId)},"time":"`);
  for (let i = from; i < to; i++) {
    const end = starts[i + 1]!;
    // The time string holds no quote but an escaped one, which the stream's key cannot follow.
    const key = b.indexOf(0x22, starts[i]! + head) + 1;
    const text = key + STDOUT.length;
    const stream = text > end ? undefined : startsWith(b, key, STDOUT) ? 'stdout' : startsWith(b, key, STDERR) ? 'stderr' : undefined;
    // A text that is not a string (an off-spec entry) does not end the line with `"}`.
    const level = stream === undefined || !startsWith(b, end - END.length, END) ? undefined : fastLevel(b, text, end - END.length);
    const timeNs = page.timesNs[i]!;
    const kept = level === undefined ? undefined : processor.takeAlone(stream!, timeNs, level);
    if (kept === undefined) processor.pushLine(page.decode(i, i + 1)[0]!, plain);
    else if (kept) fast.push(new FastLine(page, i, level!, timeNs));
    else dropped++;
  }
  processor.endPage(plain);
  // In push's order: recordOrder is a total order (no two records share a first line).
  const call: Array<FastLine | ProcessedRecord> = plain.records.length === 0 ? fast : [...fast, ...plain.records];
  if (!sortedByTime(call)) call.sort(recordOrder);
  for (const r of call) out.push(r);
  return dropped + plain.dropped;
}

/** Whether bytes `at…` of `b` are `part` (a loop: a native compare costs more for so few bytes). */
function startsWith(b: Buffer, at: number, part: Buffer): boolean {
  for (let i = 0; i < part.length; i++) if (b[at + i] !== part[i]) return false;
  return true;
}
