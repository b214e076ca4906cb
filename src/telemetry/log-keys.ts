//! One key, once, per log line. pino writes a line as its own keys (`level`, `time`), then
//! a child logger's bindings, then the call's object, then `msg`, without looking for
//! repeats: a child bound to `{sink}` whose call passes `sink` again, or a child of a child
//! bound to the same key, makes a line with the key twice, which strict JSON pipelines
//! reject. These helpers, run from the logger's hooks, keep one of each.
import { pino, type Logger } from 'pino';

const { chindingsSym } = pino.symbols;

/** Keys pino writes itself; a call's field of the same name is written with a `_` in front. */
const OWN_KEYS = ['level', 'time'] as const;
const MESSAGE_KEY = 'msg';

type Bindable = Logger & { [chindingsSym]?: string };

/** The bindings of each logger, parsed once per distinct bindings text. */
const parsed = new WeakMap<object, { text: string; bindings: Record<string, unknown> }>();

function bindingsOf(logger: Bindable): Record<string, unknown> {
  const text = logger[chindingsSym] ?? '';
  const cached = parsed.get(logger);
  if (cached?.text === text) return cached.bindings;
  const bindings = text ? (JSON.parse(`{${text.slice(1)}}`) as Record<string, unknown>) : {};
  parsed.set(logger, { text, bindings });
  return bindings;
}

function bindingsText(bindings: Record<string, unknown>, skip: ReadonlySet<string> = new Set()): string {
  let out = '';
  for (const [k, v] of Object.entries(bindings)) if (!skip.has(k)) out += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  return out;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false; // a cycle: not a binding's value
  }
}

/**
 * pino's `onChild` hook: a child bound to a key its parent already binds keeps one copy,
 * with the child's value.
 */
export function dedupeChildBindings(child: Logger): void {
  const bindable = child as Bindable;
  const text = bindable[chindingsSym] ?? '';
  if (!text) return;
  const once = bindingsText(bindingsOf(bindable));
  if (once !== text) bindable[chindingsSym] = once;
}

/**
 * Writes one log call through `write` (pino's method) with no key repeated. A field the
 * logger's bindings already carry is dropped from the call when the values agree; when
 * they differ, the call's value is written and the binding left out of that line. A field
 * named like one of pino's own keys is written with a `_` in front.
 */
export function writeWithoutRepeats(logger: Logger, args: unknown[], write: (...a: unknown[]) => void): void {
  const obj = args[0];
  if (obj === null || typeof obj !== 'object' || obj instanceof Error || Array.isArray(obj)) {
    write.apply(logger, args);
    return;
  }
  const bindable = logger as Bindable;
  const bindings = bindingsOf(bindable);
  const fields = obj as Record<string, unknown>;
  const hasMessage = args.length > 1 && args[1] !== undefined;
  let copy: Record<string, unknown> | undefined;
  let overridden: Set<string> | undefined;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value === undefined) continue;
    if (Object.hasOwn(bindings, key)) {
      copy ??= { ...fields };
      if (sameValue(value, bindings[key])) delete copy[key];
      else (overridden ??= new Set()).add(key);
    } else if ((OWN_KEYS as readonly string[]).includes(key) || (key === MESSAGE_KEY && hasMessage)) {
      copy ??= { ...fields };
      delete copy[key];
      copy[`_${key}`] = value;
    }
  }
  if (copy === undefined) {
    write.apply(logger, args);
    return;
  }
  const rest = args.slice(1);
  if (overridden === undefined) {
    write.apply(logger, [copy, ...rest]);
    return;
  }
  // pino reads the bindings text while it formats the line, synchronously: swapped for
  // this one line, then put back.
  const saved = bindable[chindingsSym];
  bindable[chindingsSym] = bindingsText(bindings, overridden);
  try {
    write.apply(logger, [copy, ...rest]);
  } finally {
    bindable[chindingsSym] = saved;
  }
}
