//! `${VAR}` interpolation of every string value of the parsed config, before validation.
//! `${VAR:-default}` uses the default when VAR is unset or empty; `$${` is a literal `${`.
//! Without the environment (`mls validate --no-env`) an unset variable is filled with a
//! placeholder instead of being a problem, and the value it lands in is recorded.

import type { RawProblem } from './problems.js';

/** One path segment: a mapping key or a list index. */
export type PathSegment = string | number;

/** A mapping of the config as written. */
export type Obj = Record<string, unknown>;

/** Whether `v` is a mapping (not a list, not null). */
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether `path` is `prefix` or below it. */
export const isUnder = (path: readonly PropertyKey[], prefix: readonly PathSegment[]): boolean => prefix.length <= path.length && prefix.every((seg, i) => path[i] === seg);

/** Result of {@link interpolate}. */
export interface Interpolated {
  value: unknown;
  problems: RawProblem[];
  /** Every value substituted from the environment, with the variable it came from. */
  substituted: { name: string; value: string }[];
  /** Values in which an unset variable was filled by the placeholder, with the variables (only with `fill`). */
  placeholders: { path: PathSegment[]; names: string[] }[];
}

/** Gives the text that stands for the unset variable `name` in the value at `path`. */
export type PlaceholderFill = (path: readonly PathSegment[], name: string) => string;

const REF_RE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function interpolateString(text: string, env: NodeJS.ProcessEnv, out: Interpolated, path: PathSegment[], fill: PlaceholderFill | undefined): string {
  if (!text.includes('${')) return text;
  const unset: string[] = [];
  const result = text.replace(REF_RE, (whole, body: string | undefined) => {
    if (whole === '$${') return '${';
    if (body === undefined) {
      out.problems.push({ path, message: 'has a ${ without a closing }; write ${VAR}, or $${ for a literal ${' });
      return '';
    }
    const sep = body.indexOf(':-');
    const name = sep === -1 ? body : body.slice(0, sep);
    if (!NAME_RE.test(name)) {
      out.problems.push({ path, message: `\${${name}} is not a variable reference; names use letters, digits and _ (write $\${ for a literal \${)` });
      return '';
    }
    const value = env[name];
    if (value !== undefined && (value !== '' || sep === -1)) {
      out.substituted.push({ name, value });
      return value;
    }
    if (sep !== -1) return body.slice(sep + 2);
    if (fill) {
      unset.push(name);
      return fill(path, name);
    }
    out.problems.push({ path, message: `environment variable ${name} is not set; set it, or write \${${name}:-default}` });
    return '';
  });
  if (unset.length > 0) out.placeholders.push({ path, names: unset });
  return result;
}

function walk(value: unknown, env: NodeJS.ProcessEnv, out: Interpolated, path: PathSegment[], fill: PlaceholderFill | undefined): unknown {
  if (typeof value === 'string') return interpolateString(value, env, out, path, fill);
  if (Array.isArray(value)) return value.map((v, i) => walk(v, env, out, [...path, i], fill));
  // Object.fromEntries defines its keys, so a `__proto__` key stays a plain (and then rejected) key
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, env, out, [...path, k], fill)]));
  return value;
}

/**
 * Replaces `${VAR}` references in every string value (not in keys) of `value`. With `fill`,
 * an unset variable without a default becomes what `fill` gives for its value's path.
 */
export function interpolate(value: unknown, env: NodeJS.ProcessEnv, fill?: PlaceholderFill): Interpolated {
  const out: Interpolated = { value: undefined, problems: [], substituted: [], placeholders: [] };
  out.value = walk(value, env, out, [], fill);
  return out;
}
