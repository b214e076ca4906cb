//! The records multiline grouping (multiline.ts) gives out: one or more lines of one stream,
//! with why the group closed, and the form an open group takes to survive a restart.
import type { ProcessLine } from './types.js';
import type { BlockPhase } from './multiline-python.js';

/** Why a record closed. A line that starts nothing closes itself: `next_line`. */
export type ClosedBy = 'next_line' | 'gap' | 'max_lines' | 'max_bytes' | 'flush';

/** One record of one or more lines of one stream. */
export interface GroupedRecord {
  /** The lines, in time order (equal times in arrival order). */
  lines: ProcessLine[];
  /** The first line's seq. */
  firstSeq: number;
  /** The last line's seq. */
  lastSeq: number;
  /** The first line's time string. */
  time: string;
  /** The first line's time. */
  timeNs: bigint;
  /** The last line's time string. */
  timeEnd: string;
  stream: string;
  /** The lines' text joined by `\n`. */
  log: string;
  lineCount: number;
  /** `single`: one line that started nothing, or a heading line no traceback followed; `traceback` and `custom`: a block of the python or the custom rule (the part after a cap included). */
  kind: 'single' | 'traceback' | 'custom';
  closedBy: ClosedBy;
}

/** An open group as a sink commits it with its cursor, to reopen after a restart. */
export interface OpenGroupSnapshot {
  stream: string;
  /** Where the block stands after its last line. */
  phase: BlockPhase;
  /** Its lines, in the order they joined it. */
  lines: readonly ProcessLine[];
}

/** Orders records by their first line's time, then by its seq. */
export function recordTimeOrder(a: GroupedRecord, b: GroupedRecord): number {
  if (a.timeNs !== b.timeNs) return a.timeNs < b.timeNs ? -1 : 1;
  return a.firstSeq - b.firstSeq;
}

/** The record of `lines` (at least one, in time order). */
export function groupedRecord(lines: ProcessLine[], kind: GroupedRecord['kind'], closedBy: ClosedBy): GroupedRecord {
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  return {
    lines,
    firstSeq: first.seq,
    lastSeq: last.seq,
    time: first.time,
    timeNs: first.timeNs,
    timeEnd: last.time,
    stream: first.stream,
    log: lines.length === 1 ? first.log : lines.map((l) => l.log).join('\n'),
    lineCount: lines.length,
    kind,
    closedBy,
  };
}
