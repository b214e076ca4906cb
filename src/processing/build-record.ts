//! A processed record made from its lines: the level (from a JSON line's level field, else
//! from the start of the text; a traceback without a level of its own is an error) and the
//! JSON structure; and the time order the processor hands records and takes lines in.
import type { ProcessLine } from './types.js';
import { detectLevel, levelFromJsonObject, type CompiledLevelRules } from './levels.js';
import { parseJsonLine } from './json-line.js';
import type { ProcessedRecord } from './record.js';

/** The record of a group or a line: `first` is its first line, the rest is given as it was gathered. */
export function buildRecord(modelId: string, levelRules: CompiledLevelRules | undefined, first: ProcessLine, lastSeq: number, log: string, lineCount: number, timeEnd: string, traceback: boolean): ProcessedRecord {
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
  const json = lineCount === 1 ? parseJsonLine(log) : undefined;
  let level = json?.levelField ? levelFromJsonObject({ [json.levelField.key]: json.levelField.value }) : undefined;
  level ??= detectLevel(first.log, levelRules);
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
