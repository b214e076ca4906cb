//! The options of multiline grouping (multiline.ts): which blocks it groups and the caps that
//! close a group, with the checks the grouper makes of them.

/** A pattern a line is tested against (a compiled user pattern, see pattern.ts). */
export interface LineTest {
  /** Whether the pattern matches somewhere in `text`; the same answer for the same text, whatever came before. */
  test(text: string): boolean;
}

/** A custom block: a line matching `start` opens it, the following lines matching `continue` join it. */
export interface MultilineRule {
  /** Opens a block. */
  start: LineTest;
  /** Carries an open block on; tried before `start`, so a line matching both joins the open block. */
  continue: LineTest;
}

/** Options of a `MultilineGrouper` (multiline.ts). */
export interface MultilineOptions {
  /** `'python'` (the default): tracebacks, with an error-level logging line just before as their head. Or a custom rule. */
  rule?: 'python' | MultilineRule;
  /**
   * Whether a line may head a traceback (python rule only); such a line is held until the next
   * line of its stream shows whether a traceback follows. Default: `defaultHeadsBlock` (multiline-python.ts).
   */
  headsBlock?: (text: string) => boolean;
  /** Most lines in one record; the line that would exceed it starts a new group. Default 500. */
  maxLines?: number;
  /** Most UTF-8 bytes of a record's `log` (lines joined by `\n`); the line that would exceed it starts a new group (a lone line larger than this is a record alone). Default 262144 (256 KiB). */
  maxBytes?: number;
  /** A group closes when the next line of its stream, or the watermark, is more than this many milliseconds of entry time after its last line. Default 2000. */
  maxGapMs?: number;
}

/** `value` if it is a positive integer, `fallback` if undefined; else a RangeError naming the option. */
export function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`multiline ${name} must be a positive integer, got ${value}`);
  return value;
}
