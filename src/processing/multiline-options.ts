//! The options of multiline grouping (multiline.ts): which blocks it groups and the caps that
//! close a group, with the checks the grouper makes of them.

/** A custom block: a line matching `start` opens it, the following lines matching `continue` join it. */
export interface MultilineRule {
  /** Opens a block. Flags `g` and `y` are refused: they make `test` depend on earlier calls. */
  start: RegExp;
  /** Carries an open block on; tried before `start`, so a line matching both joins the open block. */
  continue: RegExp;
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

/** The rule if both its expressions can be tested line by line; else an error naming the part. */
export function checkRule(rule: MultilineRule): MultilineRule {
  for (const key of ['start', 'continue'] as const) {
    if (!(rule[key] instanceof RegExp)) throw new TypeError(`multiline rule.${key} must be a RegExp`);
    if (rule[key].global || rule[key].sticky) throw new RangeError(`multiline rule.${key} must not have the g or y flag (/${rule[key].source}/${rule[key].flags})`);
  }
  return rule;
}
