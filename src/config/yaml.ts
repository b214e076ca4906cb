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
  let root: Place | undefined | null;
  return {
    value,
    lineOf: (path) => {
      root ??= placesOf(text, events) ?? null;
      let node = root ?? undefined;
      for (const seg of path) {
        const next = node?.kids?.get(seg);
        if (!next) break;
        node = next;
      }
      return node?.line;
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

/** Where a node starts, and the nodes below it: a sequence's by index, a mapping's by key. */
interface Place {
  line: number;
  kids?: Map<string | number, Place>;
}

/** The places of the document's nodes, rebuilt from the parser's events when a line is asked for. */
function placesOf(text: string, events: readonly Event[]): Place | undefined {
  let root: Place | undefined;
  // Open collections; `n` counts a sequence's items, and a mapping's keys and values.
  const open: { place: Place; mapping: boolean; n: number; key?: string | undefined }[] = [];
  // Nodes come in the order of the text, so lines are counted on as they go.
  let line = 1;
  let counted = 0;
  const lineAt = (offset: number): number => {
    for (; counted < offset; counted++) if (text.charCodeAt(counted) === 0x0a) line++;
    return line;
  };
  let end = 0; // where the last node seen ends: an empty scalar (null) has no offset of its own
  const add = (at: number, key?: string, kids?: Place['kids']): Place => {
    const place: Place = { line: lineAt(at), kids };
    const top = open.at(-1);
    if (!top) root ??= place;
    else if (!top.mapping) top.place.kids!.set(top.n++, place);
    else if (top.n++ % 2 === 0) top.key = key;
    else if (top.key !== undefined) top.place.kids!.set(top.key, place);
    return place;
  };
  for (const e of events) {
    if (e.type === EVENT_ID.SEQUENCE || e.type === EVENT_ID.MAPPING) {
      const at = firstOffset(e.anchorStart, e.tagStart, e.start);
      end = Math.max(end, at + 1);
      open.push({ place: add(at, undefined, new Map()), mapping: e.type === EVENT_ID.MAPPING, n: 0 });
    } else if (e.type === EVENT_ID.SCALAR) {
      const at = firstOffset(e.anchorStart, e.tagStart, e.valueStart);
      add(at >= 0 ? at : nextContent(text, end), getScalarValue(text, e));
      if (e.valueEnd >= 0) end = Math.max(end, e.valueEnd);
    } else if (e.type === EVENT_ID.ALIAS) {
      end = Math.max(end, e.anchorEnd);
      add(e.anchorStart);
    } else if (e.type === EVENT_ID.POP) {
      open.pop();
    }
  }
  return root;
}

/** The first of the offsets that is present (the parser gives -1 for an absent one). */
function firstOffset(...offsets: number[]): number {
  return offsets.find((o) => o >= 0) ?? -1;
}

/** Blanks, and comments (a `#` at the start or after a blank), from where the last node ended. */
const BLANKS = /(?:[ \t\r\n]|(?<![^ \t\r\n])#[^\n]*)*/y;

/** The offset of the next character at or after `from` that is neither blank nor in a comment. */
function nextContent(text: string, from: number): number {
  BLANKS.lastIndex = from;
  BLANKS.exec(text);
  return Math.min(BLANKS.lastIndex, text.length - 1);
}
