//! Path templates of the file sink: `{model_id}` and strftime-style UTC codes of the
//! entry's own time (`%Y %m %d %H %M %S %j %%`), so a late entry lands in the file of
//! the hour or day it was logged, not the one it was fetched in.
import { ConfigError } from '../../errors.js';

/** The time codes a template may use. */
export const TIME_CODES = ['Y', 'm', 'd', 'H', 'M', 'S', 'j', '%'] as const;
/** The `{…}` placeholders a template may use. */
export const PLACEHOLDERS = ['model_id'] as const;

/** One piece of a parsed template: literal text, the model id, or a time code. */
export type TemplatePart =
  | { kind: 'text'; text: string }
  | { kind: 'model' }
  | { kind: 'time'; code: 'Y' | 'm' | 'd' | 'H' | 'M' | 'S' | 'j' };
type Part = TemplatePart;

/** How many digits each time code renders (always that many: zero-padded). */
export const TIME_CODE_WIDTH = { Y: 4, m: 2, d: 2, H: 2, M: 2, S: 2, j: 3 } as const;

/** A compiled path template. */
export interface CompiledTemplate {
  /** The template as written. */
  readonly source: string;
  /** Placeholders and codes it uses, e.g. `['{model_id}', '%Y', '%m']`, in order of first use. */
  readonly placeholders: readonly string[];
  /** Whether the path depends on the entry's time (any time code but `%%`). */
  readonly usesTime: boolean;
  /** The text before the first placeholder or code: where every rendered path starts. */
  readonly staticPrefix: string;
  /** Renders the path of an entry of `modelId` logged at `timeMs` (epoch ms, UTC). */
  render(modelId: string, timeMs: number): string;
}

const DAY_MS = 86_400_000;

function parse(t: string): { parts: Part[] } | { error: string } {
  if (t.length === 0) return { error: 'path template is empty' };
  if (t.endsWith('/')) return { error: `path template "${t}" ends with "/": it must name a file` };
  const parts: Part[] = [];
  let text = '';
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (c === '%') {
      const code = t[i + 1];
      if (code === undefined) return { error: `path template "${t}" ends with a lone "%" (write "%%" for a literal percent sign)` };
      i++;
      if (code === '%') {
        text += '%';
      } else if (code === 'Y' || code === 'm' || code === 'd' || code === 'H' || code === 'M' || code === 'S' || code === 'j') {
        if (text) parts.push({ kind: 'text', text });
        text = '';
        parts.push({ kind: 'time', code });
      } else {
        return { error: `path template "${t}" uses unknown time code "%${code}"; accepted: ${TIME_CODES.map((x) => '%' + x).join(' ')}` };
      }
    } else if (c === '{') {
      const end = t.indexOf('}', i + 1);
      if (end < 0) return { error: `path template "${t}" has a "{" without its closing "}"` };
      const name = t.slice(i + 1, end);
      if (name !== 'model_id') return { error: `path template "${t}" uses unknown placeholder "{${name}}"; accepted: {model_id}` };
      if (text) parts.push({ kind: 'text', text });
      text = '';
      parts.push({ kind: 'model' });
      i = end;
    } else {
      text += c;
    }
  }
  if (text) parts.push({ kind: 'text', text });
  return { parts };
}

/**
 * Checks a path template. Returns a message naming the problem and the accepted
 * values, or `undefined` when the template is valid.
 */
export function validateTemplate(t: string): string | undefined {
  const r = parse(t);
  return 'error' in r ? r.error : undefined;
}

/** The pieces of a template (`%%` already literal text). Throws a {@link ConfigError} for an invalid one. */
export function templateParts(t: string): readonly TemplatePart[] {
  const r = parse(t);
  if ('error' in r) throw new ConfigError(r.error, [r.error]);
  return r.parts;
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

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / DAY_MS) + 1;
}

/**
 * Compiles a path template. Throws a {@link ConfigError} for an unknown `{x}` or `%x`.
 * Rendering is cached per model and per period of the finest code used (second,
 * minute, hour or day), so consecutive entries of one model cost a comparison.
 */
export function compileTemplate(t: string): CompiledTemplate {
  const parts = templateParts(t);
  const placeholders: string[] = [];
  let staticPrefix = '';
  let seenDynamic = false;
  let periodMs = Number.POSITIVE_INFINITY;
  for (const p of parts) {
    if (p.kind === 'text') {
      if (!seenDynamic) staticPrefix += p.text;
      continue;
    }
    seenDynamic = true;
    const name = p.kind === 'model' ? '{model_id}' : '%' + p.code;
    if (!placeholders.includes(name)) placeholders.push(name);
    if (p.kind === 'time') {
      const ms = p.code === 'S' ? 1_000 : p.code === 'M' ? 60_000 : p.code === 'H' ? 3_600_000 : DAY_MS;
      periodMs = Math.min(periodMs, ms);
    }
  }

  const renderUncached = (modelId: string, timeMs: number): string => {
    const d = new Date(timeMs);
    let out = '';
    for (const p of parts) {
      if (p.kind === 'text') out += p.text;
      else if (p.kind === 'model') out += sanitizeModelId(modelId);
      else {
        switch (p.code) {
          case 'Y': out += pad(d.getUTCFullYear(), TIME_CODE_WIDTH.Y); break;
          case 'm': out += pad(d.getUTCMonth() + 1, TIME_CODE_WIDTH.m); break;
          case 'd': out += pad(d.getUTCDate(), TIME_CODE_WIDTH.d); break;
          case 'H': out += pad(d.getUTCHours(), TIME_CODE_WIDTH.H); break;
          case 'M': out += pad(d.getUTCMinutes(), TIME_CODE_WIDTH.M); break;
          case 'S': out += pad(d.getUTCSeconds(), TIME_CODE_WIDTH.S); break;
          case 'j': out += pad(dayOfYear(d), TIME_CODE_WIDTH.j); break;
        }
      }
    }
    return out;
  };

  const cache = new Map<string, { start: number; end: number; path: string }>();
  return {
    source: t,
    placeholders,
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
