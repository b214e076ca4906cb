//! A config checked without its environment (`mls validate --no-env`, e.g. in CI): each value
//! holding an unset `${VAR}` is tried with a few stand-ins (a word, a number, a duration, a
//! URL, one of the values an enumeration allows…) until its schema accepts it. The variable
//! then satisfies every check that needs its value, while every other check runs on the rest
//! of the file as usual. A value that no stand-in makes valid (`ftp://${HOST}`) is wrong
//! whatever the variable holds, and its problem is reported.
import { interpolate, isUnder, type Interpolated, type PathSegment } from './interpolate.js';

/** Stand-ins for an unset variable, in the order they are tried. */
const STAND_INS = ['placeholder', '1', '1s', 'true', 'http://placeholder.invalid', '127.0.0.1:1', 'none'] as const;

/** An issue the schema found: where, and the values it allows there when it allows only some. */
export interface SchemaIssue {
  path: readonly PropertyKey[];
  values?: readonly unknown[];
}

/** The interpolated config, and which placeholder values hold. */
export interface FilledConfig extends Interpolated {
  /** Whether a problem at `path` is about a value a stand-in satisfied: a check that needs a variable's value. */
  satisfied(path: readonly PathSegment[]): boolean;
}

/**
 * Interpolates `raw` with an empty environment, choosing for each value that holds an unset
 * variable the first stand-in under which `issues` (the schema's check of the whole value)
 * finds nothing at that value.
 */
export function fillPlaceholders(raw: unknown, issues: (value: unknown) => readonly SchemaIssue[]): FilledConfig {
  const key = (path: readonly PathSegment[]): string => JSON.stringify(path);
  /** Per value: the stand-ins still to try, the first in use; a hopeless value goes back to the first of all. */
  const queue = new Map<string, string[]>();
  const hopeless = new Set<string>();
  const enumTried = new Set<string>();
  for (;;) {
    const result = interpolate(raw, {}, (path) => queue.get(key(path))?.[0] ?? STAND_INS[0]);
    const found = issues(result.value);
    let changed = false;
    for (const { path } of result.placeholders) {
      const k = key(path);
      const issue = found.find((i) => isUnder(i.path, path));
      if (issue === undefined || hopeless.has(k)) continue;
      const rest = (queue.get(k) ?? [...STAND_INS]).slice(1);
      const allowed = issue.values?.find((v): v is string => typeof v === 'string');
      if (allowed !== undefined && !enumTried.has(k)) {
        enumTried.add(k);
        rest.unshift(allowed);
      }
      if (rest.length > 0) queue.set(k, rest);
      else {
        // Wrong whatever the variable holds: reported as it reads with the first stand-in.
        hopeless.add(k);
        queue.delete(k);
      }
      changed = true;
    }
    if (!changed) {
      const held = result.placeholders.map((p) => p.path).filter((p) => !hopeless.has(key(p)));
      return { ...result, satisfied: (path) => held.some((p) => isUnder(path, p)) };
    }
  }
}
