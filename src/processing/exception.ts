//! The exception a Python traceback record shows, read from its text alone (so the same journal
//! gives the same fields): the exception printed last, which is the one that was raised, with
//! the types of the exceptions chained before it. One pass over the lines, each tried against
//! anchored patterns: linear in the text, whatever it holds, and it never throws.
import type { RecordException } from '../records/entry.js';
import { BLANK, EXCEPTION_GROUP, EXCEPTION_LINE, INDENTED, JOINER, TRACEBACK, withoutWorkerTag } from './multiline-python.js';

/** What every traceback header ends with: a text without it is no traceback, and costs one search. */
const HEADER_END = ' (most recent call last):';
/** A longer name is taken for no exception line: a type becomes a metric label and a field. */
const MAX_TYPE_LENGTH = 256;

/**
 * Where the reading stands: before any traceback (`none`), among the frames, after the
 * exception line (its message goes on), or after a chained-exception joiner (`chain`).
 */
type Phase = 'none' | 'frames' | 'raised' | 'chain';

/** The exception of a record holding a Python traceback; undefined when the text shows none. */
export function exceptionOf(text: string): RecordException | undefined {
  if (!text.includes(HEADER_END)) return undefined;
  let chain: { type: string; message: string[] }[] = [];
  let phase: Phase = 'none';
  /** Inside an exception group's drawing: the indentation of its `+`; the group's own lines follow it with `|`. */
  let margin: number | undefined;
  for (const raw of text.split('\n')) {
    let line = withoutWorkerTag(raw);
    const group = EXCEPTION_GROUP.test(line);
    if (group || TRACEBACK.test(line)) {
      // A traceback that follows no joiner is another exception: the record ends with it.
      if (phase !== 'chain') chain = [];
      phase = 'frames';
      margin = group ? line.indexOf('+') : undefined;
      continue;
    }
    if (margin !== undefined) {
      // The group's own lines are `|` at its margin; its sub-exceptions, which are not chained
      // to it, are drawn indented further.
      if (line[margin] === '|' && BLANK.test(line.slice(0, margin))) line = line.slice(line[margin + 1] === ' ' ? margin + 2 : margin + 1);
      else if (line === '' || INDENTED.test(line)) continue;
      else margin = undefined;
    }
    if (JOINER.test(line)) phase = 'chain';
    else if (phase === 'raised') chain[chain.length - 1]!.message.push(line);
    else if (phase === 'frames' && EXCEPTION_LINE.test(line)) {
      const colon = line.indexOf(':');
      const type = colon < 0 ? line.trimEnd() : line.slice(0, colon);
      if (type.length > MAX_TYPE_LENGTH) continue;
      chain.push({ type, message: colon < 0 ? [] : [line.slice(colon + 2)] });
      phase = 'raised';
    }
  }
  const raised = chain.at(-1);
  if (raised === undefined) return undefined;
  const out: RecordException = { type: raised.type };
  const message = raised.message.join('\n').trimEnd();
  if (message !== '') out.message = message;
  if (chain.length > 1) out.chain = chain.slice(0, -1).map((e) => e.type);
  return out;
}
