//! YAML reading, for the config file and for models files: one document, YAML 1.2's core
//! schema with merge keys (`<<`), duplicate keys refused, and a bound on what aliases may
//! expand to. js-yaml, because it reads a config of thousands of models several times faster
//! than the parser used before, which was a large part of `mls status` at that size
//! (docs/decisions/0045-config-read-with-js-yaml.md).
import { CORE_SCHEMA, EVENT_ID, YAMLException, constructFromEvents, getScalarValue, mergeTag, parseEvents, type Event } from 'js-yaml';

const SCHEMA = CORE_SCHEMA.withTags(mergeTag);
/** Most values aliases may add to what is written (a million, as the error says). A few repeated blocks add hundreds; an alias bomb adds billions. */
export const MAX_ALIAS_EXPANSION = 1_000_000;
/** Most keys merge keys may copy in one file; js-yaml's default (10,000) is too low for a models file with one `<<` per entry. */
const MAX_MERGE_KEYS = 1_000_000;

/** The text is not one valid YAML document. */
export class YamlSyntaxError extends Error {
  /**
   * @param line 1-based line of the problem, when it has one
   * @param column 1-based column of the problem, when it has one
   * @param reason what is wrong, without position
   */
  constructor(
    readonly line: number | undefined,
    readonly column: number | undefined,
    readonly reason: string,
  ) {
    super(line === undefined ? reason : `line ${line}, column ${column}: ${reason}`);
    this.name = 'YamlSyntaxError';
  }
}

/** A parsed YAML document. */
export interface YamlDocument {
  /** The document's value; `undefined` when the text holds no document (empty, or only comments). */
  value: unknown;
  /**
   * The 1-based line of the node at `path` (mapping keys and sequence indexes from the top),
   * or of its deepest ancestor that exists; undefined for an empty document.
   */
  lineOf(path: readonly (string | number)[]): number | undefined;
}

/** Parses `text` as one YAML document; throws {@link YamlSyntaxError} when it is not one. */
export function readYaml(text: string): YamlDocument {
  let events: Event[];
  let docs: unknown[];
  try {
    events = parseEvents(text, {});
    docs = constructFromEvents(events, { source: text, schema: SCHEMA, maxTotalMergeKeys: MAX_MERGE_KEYS });
  } catch (err) {
    if (err instanceof YAMLException && err.mark) throw new YamlSyntaxError(err.mark.line + 1, err.mark.column + 1, err.reason);
    throw new YamlSyntaxError(undefined, undefined, err instanceof YAMLException ? err.reason : String(err));
  }
  if (docs.length > 1) throw new YamlSyntaxError(undefined, undefined, `the text holds ${docs.length} YAML documents (separated by ---); write one`);
  const value = docs[0];
  checkAliases(value);
  let places: Places | undefined;
  return {
    value,
    lineOf: (path) => {
      places ??= new Places(text, events);
      return places.lineOf(path);
    },
  };
}

/**
 * Aliases are shared, not copied: `[*a, *a]` is one object twice. Whatever walks the
 * value as a tree (interpolation, validation) would visit an alias bomb's billions of
 * values, so the expansion is measured first, on the shared graph.
 */
function checkAliases(value: unknown): void {
  const sizes = new Map<object, number>();
  let written = 0;
  const size = (v: unknown): number => {
    if (v === null || typeof v !== 'object') return 1;
    const known = sizes.get(v);
    if (known !== undefined) {
      if (known < 0) throw new YamlSyntaxError(undefined, undefined, 'an alias refers to a collection that contains it; write the value out');
      return known;
    }
    sizes.set(v, -1);
    const kids = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    written += 1 + kids.length;
    let n = 1;
    for (const k of kids) n += size(k);
    sizes.set(v, n);
    return n;
  };
  const expanded = size(value);
  if (expanded - written > MAX_ALIAS_EXPANSION) {
    throw new YamlSyntaxError(undefined, undefined, 'its aliases expand to more than a million values; write the repeated part out, or set it once in model_defaults');
  }
}

/** Where each node starts, rebuilt from the parser's events when a line is asked for. */
interface Place {
  at: number;
  /** Items of a sequence, or values of a mapping. */
  kids?: Place[];
  /** Keys of a mapping (undefined for a key that is not a scalar), in the order of `kids`. */
  keys?: (string | undefined)[];
}

class Places {
  readonly #text: string;
  readonly #root: Place | undefined;
  #lineStarts: number[] | undefined;

  constructor(text: string, events: readonly Event[]) {
    this.#text = text;
    this.#root = this.#build(events);
  }

  #build(events: readonly Event[]): Place | undefined {
    const text = this.#text;
    let root: Place | undefined;
    // Open collections; a mapping alternates between expecting a key and its value.
    const open: { place: Place; key: string | undefined; wantsKey: boolean }[] = [];
    let end = 0; // where the last node seen ends: an empty scalar (null) has no offset of its own
    const add = (place: Place, key: string | undefined): void => {
      const top = open[open.length - 1];
      if (!top) {
        root ??= place;
        return;
      }
      if (top.place.keys) {
        if (top.wantsKey) {
          top.key = key;
          top.wantsKey = false;
          return;
        }
        top.place.keys.push(top.key);
        top.wantsKey = true;
      }
      top.place.kids!.push(place);
    };
    for (const e of events) {
      switch (e.type) {
        case EVENT_ID.SEQUENCE:
        case EVENT_ID.MAPPING: {
          const at = firstOffset(e.anchorStart, e.tagStart, e.start);
          const place: Place = e.type === EVENT_ID.MAPPING ? { at, kids: [], keys: [] } : { at, kids: [] };
          end = Math.max(end, at + 1);
          add(place, undefined);
          open.push({ place, key: undefined, wantsKey: true });
          break;
        }
        case EVENT_ID.SCALAR: {
          const at = firstOffset(e.anchorStart, e.tagStart, e.valueStart);
          const place: Place = { at: at >= 0 ? at : nextContent(text, end) };
          if (e.valueEnd >= 0) end = Math.max(end, e.valueEnd);
          add(place, getScalarValue(text, e));
          break;
        }
        case EVENT_ID.ALIAS:
          end = Math.max(end, e.anchorEnd);
          add({ at: e.anchorStart }, undefined);
          break;
        case EVENT_ID.POP:
          open.pop();
          break;
        default:
          break;
      }
    }
    return root;
  }

  lineOf(path: readonly (string | number)[]): number | undefined {
    if (!this.#root) return undefined;
    let node: Place = this.#root;
    for (const seg of path) {
      const i: number = typeof seg === 'number' ? (node.keys ? -1 : seg) : (node.keys?.lastIndexOf(seg) ?? -1);
      const next: Place | undefined = i >= 0 ? node.kids?.[i] : undefined;
      if (!next) break;
      node = next;
    }
    return this.#line(node.at);
  }

  #line(offset: number): number {
    const starts = (this.#lineStarts ??= lineStarts(this.#text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}

/** The first of the offsets that is present (the parser gives -1 for an absent one). */
function firstOffset(...offsets: number[]): number {
  for (const o of offsets) if (o >= 0) return o;
  return -1;
}

/** The offset of the next character at or after `from` that is neither blank nor in a comment. */
function nextContent(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x23 /* # */ && (i === 0 || /\s/.test(text[i - 1]!))) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return text.length;
      i = nl + 1;
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
    else return i;
  }
  return Math.max(0, text.length - 1);
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}
