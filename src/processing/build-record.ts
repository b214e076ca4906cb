//! A processed record made from its lines: the level (from a JSON line's level field, else
//! from the start of the text; a traceback without a level of its own is an error), the JSON
//! structure, the exception of a traceback; and the time order the processor hands records
//! and takes lines in.
import type { DetectedLevel, ProcessLine } from './types.js';
import { detectLevel, levelFromJsonObject, type CompiledLevelRules } from './levels.js';
import { parseJsonLine, type JsonLine } from './json-line.js';
import { exceptionOf } from './exception.js';
import type { RecordException } from '../records/entry.js';
import type { Redactor } from './redact.js';
import type { ProcessedRecord } from './record.js';

/** The rules a record is made with (the processor's). */
export interface RecordRules {
  levelRules?: CompiledLevelRules;
  /** Applied to a JSON line's strings (the lines' text is redacted before). */
  redact?: Redactor;
}

/**
 * The record of a group or a line: `first` is its first line, the rest is given as it was
 * gathered. A record whose level or structure cannot be read (whatever throws on it) is
 * shipped as its text alone: one line never stops a batch.
 */
export function buildRecord(modelId: string, rules: RecordRules, first: ProcessLine, lastSeq: number, log: string, lineCount: number, timeEnd: string, traceback: boolean): ProcessedRecord {
  const record: ProcessedRecord = {
    seq: first.seq,
    modelId,
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
  let json: JsonLine | undefined;
  let level: DetectedLevel | undefined;
  let exception: RecordException | undefined;
  try {
    json = lineCount === 1 ? parseJsonLine(log, rules.redact) : undefined;
    level = json?.levelField ? levelFromJsonObject({ [json.levelField.key]: json.levelField.value }) : undefined;
    level ??= detectLevel(first.log, rules.levelRules);
    // Grouped lines, or one entry of several lines (a traceback written whole).
    if (json === undefined && (lineCount > 1 || log.includes('\n'))) exception = exceptionOf(log);
  } catch {
    // Plain text, as the line came (already redacted as text).
    return record;
  }
  if (exception) record.exception = exception;
  if (level === undefined && (traceback || exception)) level = { level: 'error', text: 'ERROR' };
  if (level) {
    record.level = level.level;
    record.levelText = level.text;
  }
  if (json) {
    if (json.redactedText !== undefined) record.log = json.redactedText;
    if (json.message !== undefined) record.message = json.message;
    if (Object.keys(json.attributes).length > 0) record.attributes = json.attributes;
    if (json.traceId) record.traceId = json.traceId;
    if (json.spanId) record.spanId = json.spanId;
  }
  return record;
}

/** What records are ordered by: their first line's time, then its seq. */
export interface RecordPlace {
  timeNs: bigint;
  firstSeq: number;
}

/** Records by their first line's time, then seq. */
export function recordOrder(a: RecordPlace, b: RecordPlace): number {
  return a.timeNs < b.timeNs ? -1 : a.timeNs > b.timeNs ? 1 : a.firstSeq - b.firstSeq;
}

/** Whether `records` are in {@link recordOrder} already. */
export function sortedByTime(records: readonly RecordPlace[]): boolean {
  for (let i = 1; i < records.length; i++) if (recordOrder(records[i - 1]!, records[i]!) > 0) return false;
  return true;
}

/** The lines in time order, equal times in their given order; the array itself when it is in order already (the usual page). */
export function inTimeOrder(lines: readonly ProcessLine[]): readonly ProcessLine[] {
  let sorted = true;
  for (let i = 1; i < lines.length && sorted; i++) sorted = lines[i - 1]!.timeNs <= lines[i]!.timeNs;
  if (sorted) return lines;
  const index = lines.map((_, i) => i);
  index.sort((a, b) => (lines[a]!.timeNs < lines[b]!.timeNs ? -1 : lines[a]!.timeNs > lines[b]!.timeNs ? 1 : a - b));
  return index.map((i) => lines[i]!);
}
