//! Turns validation issues into one-line problems, `path: what is wrong; how to fix`,
//! and supplies the error map that words zod's generic issues that way.
import leven from 'leven';
import type { z } from 'zod';
import { show } from './units.js';
import type { PathSegment } from './interpolate.js';

/** A problem before formatting: where, and what. */
export interface RawProblem {
  path: PathSegment[];
  message: string;
}

/** Formats a path as `sinks[1].headers.X-Api-Key` (keys that are not plain words in `["…"]`). */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out === '' ? '(top level)' : out;
}

/** Formats a problem as one line. */
export function formatProblem(p: RawProblem): string {
  return `${formatPath(p.path)}: ${p.message}`;
}

/** The closest candidate to `word`, if it is close enough to be a likely typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase().replace(/-/g, '_');
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const lc = c.toLowerCase();
    // a prefix or extension of a key ("polling" for "poll") counts as one edit
    const d = Math.min(leven(w, lc), w.length >= 3 && lc.length >= 3 && (w.startsWith(lc) || lc.startsWith(w)) ? 1 : Infinity);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

function unknownKeyMessage(key: string, allowed: readonly string[]): string {
  const guess = closest(key, allowed);
  return `unknown key; ${guess ? `did you mean ${guess}? ` : ''}allowed keys: ${allowed.join(', ')}`;
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
  record: 'a mapping',
};

/**
 * Error map passed to `safeParse`: words zod's generic issues as `what is wrong; how to fix`.
 * An `unrecognized_keys` issue gets one line per key (split again by {@link issuesToProblems}).
 */
export const configErrorMap: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'invalid_type': {
      if (iss.input === undefined) return 'is required';
      const expected = ARTICLE[iss.expected] ?? iss.expected;
      return `expected ${expected}, got ${show(iss.input)}`;
    }
    case 'too_small': {
      if (iss.origin === 'string' && Number(iss.minimum) === 1) return 'expected a non-empty string';
      if (iss.origin === 'array') return `needs at least ${String(iss.minimum)} entr${Number(iss.minimum) === 1 ? 'y' : 'ies'}`;
      return `${show(iss.input)} is too small; the minimum is ${String(iss.minimum)}${iss.inclusive === false ? ' (exclusive)' : ''}`;
    }
    case 'too_big':
      return `${show(iss.input)} is too large; the maximum is ${String(iss.maximum)}${iss.inclusive === false ? ' (exclusive)' : ''}`;
    case 'invalid_value': {
      const values = iss.values.map(String);
      const guess = typeof iss.input === 'string' ? closest(iss.input, values) : undefined;
      return `${show(iss.input)} is not allowed; use one of ${values.join(', ')}${guess ? ` (did you mean ${guess}?)` : ''}`;
    }
    case 'unrecognized_keys': {
      const shape = (iss.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
      const allowed = shape ? Object.keys(shape) : [];
      return iss.keys.map((k) => unknownKeyMessage(k, allowed)).join('\n');
    }
    case 'invalid_union': {
      if ('discriminator' in iss && iss.discriminator) {
        const options = ((iss as { options?: unknown[] }).options ?? []).map(String);
        const input = iss.input as Record<string, unknown> | undefined;
        const value = input && typeof input === 'object' ? input[iss.discriminator] : undefined;
        if (value === undefined) return `is required; use one of ${options.join(', ')}`;
        const guess = typeof value === 'string' ? closest(value, options) : undefined;
        return `${show(value)} is not a known ${iss.discriminator}; use one of ${options.join(', ')}${guess ? ` (did you mean ${guess}?)` : ''}`;
      }
      const takes = unionTakes(iss.errors);
      return takes.length > 0 ? `${show(iss.input)} is not allowed; use ${takes.join(', or ')}` : undefined;
    }
    default:
      return undefined;
  }
};

/** The one option of a union whose issues are all inside the value: the value had its shape (a mapping with a bad key). */
function shapedOption(branches: readonly (readonly z.core.$ZodIssue[])[]): readonly z.core.$ZodIssue[] | undefined {
  const shaped = branches.filter((b) => b.length > 0 && b.every((i) => i.path.length > 0));
  return shaped.length === 1 ? shaped[0] : undefined;
}

/** What a union's options take, from their own issues: values (`off`, `false`) and kinds (`a mapping`). */
function unionTakes(branches: readonly (readonly z.core.$ZodIssue[])[]): string[] {
  const roots = branches.flatMap((b) => b.filter((i) => i.path.length === 0));
  return [...new Set(roots.flatMap((i) => (i.code === 'invalid_value' ? i.values.map(String) : i.code === 'invalid_type' ? [ARTICLE[i.expected] ?? i.expected] : [])))];
}

/** Converts zod issues into problems (one per unknown key). */
export function issuesToProblems(issues: readonly z.core.$ZodIssue[]): RawProblem[] {
  const out: RawProblem[] = [];
  for (const iss of issues) {
    const path = iss.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (iss.code === 'unrecognized_keys') {
      const lines = iss.message.split('\n');
      iss.keys.forEach((k, i) => out.push({ path: [...path, k], message: lines[i] ?? lines[0] ?? 'unknown key' }));
    } else if (iss.code === 'invalid_union' && !('discriminator' in iss && iss.discriminator)) {
      // A value shaped like one option (a mapping with a bad key) gets that option's problems.
      const shaped = shapedOption(iss.errors);
      if (shaped) out.push(...issuesToProblems(shaped).map((p) => ({ path: [...path, ...p.path], message: p.message })));
      else out.push({ path, message: iss.message });
    } else {
      out.push({ path, message: iss.message });
    }
  }
  return out;
}
