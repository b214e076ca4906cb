//! The shape of a Python traceback, line by line: which line opens a block, which lines carry it
//! on, and which logging lines may head it. Pure tests on one line's text and the phase the
//! block is in; the grouper in multiline.ts owns the state.

/**
 * Where a block stands, which decides what may follow:
 * - `heading`: an error-level logging line, waiting to see whether a traceback follows;
 * - `frames`: inside `Traceback (most recent call last):`, before the exception line;
 * - `raised`: after the `ExceptionType: message` line;
 * - `chain`: after a chained-exception joiner, waiting for the next traceback;
 * - `group`: inside an exception group's indented drawing (`  + Exception Group Traceback …`);
 * - `custom`: inside a block of a custom rule.
 */
export type BlockPhase = 'heading' | 'frames' | 'raised' | 'chain' | 'group' | 'custom';

// The lines of a Python traceback, read here and in exception.ts: its header, an exception
// group's, the chained-exception joiners, and lines blank or indented.
export const TRACEBACK = /^Traceback \(most recent call last\):\s*$/;
export const EXCEPTION_GROUP = /^\s*\+ Exception Group Traceback \(most recent call last\):\s*$/;
export const JOINER =
  /^(?:The above exception was the direct cause of the following exception:|During handling of the above exception, another exception occurred:)\s*$/;
export const BLANK = /^\s*$/;
export const INDENTED = /^\s/;
/** loguru marks the failing frame with `> File "…"` at the start of the line. */
const MARKED_FRAME = /^> File "/;
/** `ValueError: bad`, `torch.OutOfMemoryError: CUDA out of memory…`, `KeyboardInterrupt`. */
export const EXCEPTION_LINE = /^[A-Za-z_][\w.]*(?::(?:\s|$)|\s*$)/;

const LEVEL = String.raw`\[?(?:ERROR|CRITICAL|FATAL|EXCEPTION)\]?(?=[\s:|]|$)`;
const STAMP = String.raw`\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?`;
/** An optional time stamp, then an optional ` - logger - ` or `| `, then the level. */
const HEADING = new RegExp(String.raw`^(?:${STAMP}\s+(?:-\s+[\w.\-]+\s+-\s+|\|\s+)?)?${LEVEL}`);

/**
 * The default test for a logging line that may head a traceback (the message of
 * `logger.exception`): the level ERROR, CRITICAL, FATAL or EXCEPTION, upper case, at the start
 * of the line or right after a leading time stamp, as Python's common formats write it —
 * `ERROR:app:request failed`, `ERROR:    Exception in ASGI application` (uvicorn),
 * `2026-03-01 12:00:00,123 - app - ERROR - request failed`, `[2026-03-01 12:00:00,123] ERROR in app: …`,
 * `2026-03-01 12:00:00.123 | ERROR    | app:run:42 - …` (loguru), `ERROR 03-01 12:00:00 [core.py:12] …` (vLLM).
 * Never a search through the whole text: `loaded model, no ERROR` does not head a block.
 */
export function defaultHeadsBlock(text: string): boolean {
  const line = withoutWorkerTag(text);
  // What a heading starts with: a time stamp (a digit or `[`) or the level's first letter.
  const c = line.charCodeAt(0);
  if (!((c >= 48 && c <= 57) || c === 91 || c === 69 || c === 67 || c === 70)) return false;
  return HEADING.test(line);
}

/**
 * A worker's tag that multi-process servers put before every line a worker writes:
 * vLLM's and Ray's `(VllmWorker rank=0 pid=4242) `, torch.distributed's `[rank0]: ` and
 * torchrun's `[default0]: ` (up to three, nested).
 */
const WORKER_TAG = /^(?:\([A-Za-z][\w.-]*(?: [\w.-]+=[\w.-]+)*\) |\[(?:rank|default)\d+\]: ?){1,3}/;

/** The line as the worker wrote it, without the tags before it. */
export function withoutWorkerTag(text: string): string {
  const c = text.charCodeAt(0);
  if (c !== 40 && c !== 91) return text;
  const m = WORKER_TAG.exec(text);
  return m === null ? text : text.slice(m[0].length);
}

/** The phase a Python block opens with if `text` opens one, else undefined. */
export function pythonOpens(line: string, headsBlock: (text: string) => boolean): BlockPhase | undefined {
  const text = withoutWorkerTag(line);
  const c = text.charCodeAt(0);
  if (c === 84 && TRACEBACK.test(text)) return 'frames';
  if ((c === 43 || c <= 32 || c > 127) && EXCEPTION_GROUP.test(text)) return 'group';
  if (headsBlock(line)) return 'heading';
  return undefined;
}

/**
 * The phase after `text` if it carries a Python block in `phase` on, else undefined (the block
 * is complete, and `text` starts afresh).
 *
 * The exception line ends the frames. After it only blank lines, indented lines (details some
 * exceptions print indented, such as pydantic's field errors) and the chained-exception joiners
 * carry on: an unindented line after the exception line is taken as the next log line, so
 * unindented continuation lines of a multi-line message, and 3.11 notes, become records of their own.
 * A `Traceback` line that follows no joiner starts a new block (two tracebacks back to back).
 */
export function pythonContinues(phase: BlockPhase, line: string): BlockPhase | undefined {
  const text = withoutWorkerTag(line);
  switch (phase) {
    case 'heading':
      if (TRACEBACK.test(text)) return 'frames';
      if (EXCEPTION_GROUP.test(text)) return 'group';
      return undefined;
    case 'frames':
      if (BLANK.test(text) || INDENTED.test(text) || MARKED_FRAME.test(text)) return 'frames';
      if (TRACEBACK.test(text) || JOINER.test(text)) return undefined;
      return EXCEPTION_LINE.test(text) ? 'raised' : undefined;
    case 'raised':
    case 'group':
      if (BLANK.test(text) || INDENTED.test(text)) return phase;
      return JOINER.test(text) ? 'chain' : undefined;
    case 'chain':
      if (BLANK.test(text)) return 'chain';
      if (TRACEBACK.test(text)) return 'frames';
      if (EXCEPTION_GROUP.test(text)) return 'group';
      return undefined;
    case 'custom':
      return undefined;
  }
}
