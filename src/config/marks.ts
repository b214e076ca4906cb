//! Marks on schema fields that the loader acts on without knowing where they are: secret
//! values (scrubbed from problems and logs) and paths (resolved against the config's
//! folder). A field is marked where it is declared, by the building block that makes it,
//! so a section or sink added later needs no list kept anywhere else.
import { z } from 'zod';
import { isObj } from './interpolate.js';

/** What the loader does with a marked field. */
export type FieldMark =
  /** A secret string, or a mapping whose values are all secrets (e.g. HTTP headers). */
  | { secret: true }
  /** A file path, resolved against the config's folder. */
  | { path: 'file' }
  /** A module specifier: resolved like a file when it starts with `.` or `/`, else a package name. */
  | { path: 'module' };

const marks = z.registry<FieldMark>();

/** Marks `schema` (returned as it is). Copies made later (`.describe()`) keep the mark. */
export function mark<T extends z.ZodType>(schema: T, how: FieldMark): T {
  marks.add(schema, how);
  holdsMarks = new WeakMap();
  return schema;
}

/** Per schema: whether any field inside it is marked (a config's 10,000 models need not be walked when none is). */
let holdsMarks = new WeakMap<z.ZodType, boolean>();

function mayHoldMarks(s: z.ZodType): boolean {
  const known = holdsMarks.get(s);
  if (known !== undefined) return known;
  holdsMarks.set(s, true); // while it is worked out: a schema that refers to itself is walked
  const found = marks.get(s) !== undefined || partsOf(defOf(s)).some(mayHoldMarks);
  holdsMarks.set(s, found);
  return found;
}

/** A marked field met in a value: where it is, its mark, and its value. */
export interface MarkedField {
  /** Keys and indexes from the value passed to {@link markedFields} to the field. */
  path: (string | number)[];
  mark: FieldMark;
  value: unknown;
  /** Replaces the field's value in the (not yet frozen) value it was found in. */
  set(value: unknown): void;
}

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
};

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schemas a schema is made of: a pipe's two ends, what a wrapper wraps, an array's items, a record's values, an object's fields, a union's options; none for a leaf. */
function partsOf(def: Def): readonly z.ZodType[] {
  if (def.type === 'pipe') return [def.in!, def.out!];
  return [def.innerType, def.element, def.valueType, ...Object.values(def.shape ?? {}), ...(def.options ?? [])].filter((part) => part !== undefined);
}

/** Whether an option of a discriminated union accepts `tag` as its discriminator. */
function optionAccepts(option: z.ZodType, discriminator: string, tag: unknown): boolean {
  const field = defOf(option).shape?.[discriminator];
  const values = field ? (defOf(field) as { values?: unknown[] }).values : undefined;
  return values?.includes(tag) === true;
}

/**
 * Every marked field of `value` read along `schema`, in the schema's key order. Works on
 * input as written (before parsing: fields may have any shape, and are skipped when not
 * where the schema expects them) as well as on parsed output, whose keys are the same.
 * A sink block whose `type` is unknown is read with the fields of every type, so that a
 * secret in a mistyped block is still known as one.
 */
export function markedFields(schema: z.ZodType, value: unknown): MarkedField[] {
  const out: MarkedField[] = [];
  const walk = (s: z.ZodType, v: unknown, path: (string | number)[], set: (x: unknown) => void): void => {
    if (v === undefined || !mayHoldMarks(s)) return;
    const m = marks.get(s);
    if (m !== undefined) {
      out.push({ path, mark: m, value: v, set });
      return;
    }
    const def = defOf(s);
    switch (def.type) {
      case 'object':
        if (!isObj(v)) return;
        for (const [key, field] of Object.entries(def.shape!)) walk(field, v[key], [...path, key], (x) => (v[key] = x));
        return;
      case 'array':
        if (!Array.isArray(v)) return;
        v.forEach((item, i) => walk(def.element!, item, [...path, i], (x) => (v[i] = x)));
        return;
      case 'record':
        if (!isObj(v)) return;
        for (const key of Object.keys(v)) walk(def.valueType!, v[key], [...path, key], (x) => (v[key] = x));
        return;
      case 'union': {
        const options = def.options!;
        const disc = def.discriminator;
        const chosen = disc !== undefined && isObj(v) ? options.filter((o) => optionAccepts(o, disc, v[disc])) : [];
        for (const o of chosen.length > 0 ? chosen : options) walk(o, v, path, set);
        return;
      }
      default:
        // A wrapper (optional, default…) or a pipe: the same value, read along what it is made of.
        for (const part of partsOf(def)) walk(part, v, path, set);
    }
  };
  walk(schema, value, [], () => {
    throw new Error('bug: the top of a config has no field to set');
  });
  return out;
}

/**
 * The secret strings of `value`: marked values, and the string values of marked mappings.
 * A secret URL that carries credentials (a proxy's `http://user:password@host`) also gives
 * its password and `user:password`, the forms a server echoes without the rest of the URL.
 */
export function secretStrings(fields: readonly MarkedField[]): string[] {
  const single: string[] = [];
  const inMaps: string[] = [];
  for (const f of fields) {
    if (!('secret' in f.mark)) continue;
    if (typeof f.value === 'string') single.push(f.value, ...urlCredentials(f.value));
    else if (isObj(f.value)) for (const v of Object.values(f.value)) if (typeof v === 'string') inMaps.push(v);
  }
  // Single secrets (tokens, signing secrets) first, then the values of secret mappings.
  return [...single, ...inMaps];
}

function urlCredentials(value: string): string[] {
  const url = value.includes('@') ? URL.parse(value) : null;
  if (!url?.password) return [];
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text; // a stray `%`: the URL keeps it as written, and so does the echo
    }
  };
  const password = decode(url.password);
  return [password, `${decode(url.username)}:${password}`];
}
