//! Path templates of the file sink: `{model_id}` and strftime-style UTC codes of the
//! entry's own time (`%Y %m %d %H %M %S %j %%`), so a late entry lands in the file of
//! the hour or day it was logged, not the one it was fetched in.
import { ConfigError } from '../../errors.js';

/** How many digits each time code renders (always that many: zero-padded). */
export const TIME_CODE_WIDTH = { Y: 4, m: 2, d: 2, H: 2, M: 2, S: 2, j: 3 } as const;
type TimeCode = keyof typeof TIME_CODE_WIDTH;

/** One piece of a parsed template: literal text, the model id, or a time code. */
export type TemplatePart = { kind: 'text'; text: string } | { kind: 'model' } | { kind: 'time'; code: TimeCode };

/** A compiled path template. */
export interface CompiledTemplate {
  /** Whether the path depends on the entry's time (any time code but `%%`). */
  readonly usesTime: boolean;
  /** The text before the first placeholder or code: where every rendered path starts. */
  readonly staticPrefix: string;
  /** Renders the path of an entry of `modelId` logged at `timeMs` (epoch ms, UTC). */
  render(modelId: string, timeMs: number): string;
}

const DAY_MS = 86_400_000;
/** The period of each code finer than a day, for the render cache. */
const PERIOD_MS: Partial<Record<TimeCode, number>> = { S: 1_000, M: 60_000, H: 3_600_000 };
/** Where each code's digits stand in `Date.prototype.toISOString()` (`%j` is worked out). */
const ISO_AT = { Y: 0, m: 5, d: 8, H: 11, M: 14, S: 17 } as const;
/** A `%` and the character after it, a `{…}` (closed or not), or a run of literal text. */
const TOKEN = /%(.?)|\{([^}]*)(\}?)|[^%{]+/gs;

/** The pieces of `t`, or the message naming why it is not a template. */
function parse(t: string): TemplatePart[] | string {
  if (t.length === 0) return 'path template is empty';
  if (t.endsWith('/')) return `path template "${t}" ends with "/": it must name a file`;
  const parts: TemplatePart[] = [];
  for (const [token, code, name, closed] of t.matchAll(TOKEN)) {
    if (code === '') return `path template "${t}" ends with a lone "%" (write "%%" for a literal percent sign)`;
    if (code === '%') parts.push({ kind: 'text', text: '%' });
    else if (code !== undefined && Object.hasOwn(TIME_CODE_WIDTH, code)) parts.push({ kind: 'time', code: code as TimeCode });
    else if (code !== undefined) return `path template "${t}" uses unknown time code "%${code}"; accepted: %Y %m %d %H %M %S %j %%`;
    else if (name === undefined) parts.push({ kind: 'text', text: token });
    else if (closed === '') return `path template "${t}" has a "{" without its closing "}"`;
    else if (name !== 'model_id') return `path template "${t}" uses unknown placeholder "{${name}}"; accepted: {model_id}`;
    else parts.push({ kind: 'model' });
  }
  return parts;
}

/**
 * Checks a path template. Returns a message naming the problem and the accepted
 * values, or `undefined` when the template is valid.
 */
export function validateTemplate(t: string): string | undefined {
  const r = parse(t);
  return typeof r === 'string' ? r : undefined;
}

/** The pieces of a template (`%%` already literal text). Throws a {@link ConfigError} for an invalid one. */
export function templateParts(t: string): readonly TemplatePart[] {
  const r = parse(t);
  if (typeof r === 'string') throw new ConfigError(r, [r]);
  return r;
}

/**
 * Makes a model id safe as one path segment: every character outside
 * `[A-Za-z0-9._-]` becomes `_`, and an id that would read as `.`, `..` or nothing
 * becomes `_`, so no model id can escape or alias its directory.
 */
export function sanitizeModelId(id: string): string {
  const s = id.replace(/[^A-Za-z0-9._-]/g, '_');
  return s === '' || s === '.' || s === '..' ? '_' : s;
}

/** The digits of time code `code` at `timeMs`. */
function timeDigits(code: TimeCode, timeMs: number): string {
  const iso = new Date(timeMs).toISOString();
  if (code !== 'j') return iso.slice(ISO_AT[code], ISO_AT[code] + TIME_CODE_WIDTH[code]);
  const day = Math.floor((timeMs - Date.UTC(Number(iso.slice(0, 4)), 0, 1)) / DAY_MS) + 1;
  return String(day).padStart(TIME_CODE_WIDTH.j, '0');
}

/**
 * Compiles a path template. Throws a {@link ConfigError} for an unknown `{x}` or `%x`.
 * Rendering is cached per model and per period of the finest code used (second,
 * minute, hour or day), so consecutive entries of one model cost a comparison.
 */
export function compileTemplate(t: string): CompiledTemplate {
  const parts = templateParts(t);
  const dynamic = parts.findIndex((p) => p.kind !== 'text');
  const staticPrefix = (dynamic < 0 ? parts : parts.slice(0, dynamic)).map((p) => (p.kind === 'text' ? p.text : '')).join('');
  const periodMs = Math.min(...parts.map((p) => (p.kind === 'time' ? (PERIOD_MS[p.code] ?? DAY_MS) : Number.POSITIVE_INFINITY)));
  const renderUncached = (modelId: string, timeMs: number): string =>
    parts.map((p) => (p.kind === 'text' ? p.text : p.kind === 'model' ? sanitizeModelId(modelId) : timeDigits(p.code, timeMs))).join('');

  const cache = new Map<string, { start: number; end: number; path: string }>();
  return {
    usesTime: Number.isFinite(periodMs),
    staticPrefix,
    render(modelId: string, timeMs: number): string {
      const hit = cache.get(modelId);
      if (hit !== undefined && timeMs >= hit.start && timeMs < hit.end) return hit.path;
      const path = renderUncached(modelId, timeMs);
      const start = Number.isFinite(periodMs) ? Math.floor(timeMs / periodMs) * periodMs : Number.NEGATIVE_INFINITY;
      const end = Number.isFinite(periodMs) ? start + periodMs : Number.POSITIVE_INFINITY;
      if (cache.size >= 10_000) cache.clear();
      cache.set(modelId, { start, end, path });
      return path;
    },
  };
}
