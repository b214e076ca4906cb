//! The building blocks of the config schema: leaves parsed by functions that say what is
//! wrong and how to fix it (durations, sizes, URLs, secrets, paths, header maps), and the
//! fields every sink block takes. Sections and sink types are made from these.
import { z } from 'zod';
import { HTTP_TOKEN } from '../net/http-token.js';
import { formatDuration } from '../time/duration.js';
import { Fail, parseDurationValue, parseSizeValue, show } from './units.js';
import { mark } from './marks.js';
import type { RawProblem } from './problems.js';

/** JSON Schema keywords attached to a leaf (merged into the generated schema). */
export type JsonMeta = Record<string, unknown>;

/**
 * A leaf value parsed by a function rather than by zod primitives, so every message can
 * say what is wrong and how to fix it. `parse` returns the value, a `Fail`, or pushes
 * problems located below the leaf (e.g. one bad header among many).
 */
export function leaf<T>(description: string, json: JsonMeta, parse: (value: unknown, nested: RawProblem[]) => T | Fail) {
  return z
    .unknown()
    .transform((value, ctx): T => {
      const nested: RawProblem[] = [];
      const result = value === undefined ? new Fail('is required') : parse(value, nested);
      for (const p of nested) ctx.addIssue({ code: 'custom', message: p.message, path: p.path, input: value });
      if (result instanceof Fail) ctx.addIssue({ code: 'custom', message: result.message, input: value });
      if (result instanceof Fail || nested.length > 0) return z.NEVER;
      return result;
    })
    .meta({ ...json, description });
}

const DURATION_JSON = { type: 'string', pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$' };
const SIZE_JSON = {
  anyOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: '^\\d+(\\.\\d+)?\\s*([KMGT]i?B|B)?$' },
  ],
};

/**
 * Lets a number or boolean field take a string, as `${VAR}` interpolation produces:
 * `"8"` → 8, `"true"` → true. Anything else goes to the inner schema unchanged.
 */
export function scalar<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    const t = v.trim();
    if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    return t === 'true' ? true : t === 'false' ? false : v;
  }, schema);
}

/**
 * A check of a section: its duration `lower` is shorter than its duration `upper` (or as long,
 * unless `strict`). It is made whenever both parsed, whatever else in the section is wrong,
 * so that it is reported along with the problems of the fields themselves; at the key `at`.
 */
export function inOrder(lower: string, upper: string, o: { at: string; strict?: boolean; message: (lower: string, upper: string) => string }) {
  const ms = (section: unknown, key: string): number => (section as Record<string, number>)[key]!;
  return z.refine<Record<string, unknown>>((v) => ms(v, lower) < ms(v, upper) || (!o.strict && ms(v, lower) === ms(v, upper)), {
    path: [o.at],
    when: (p) => typeof ms(p.value, lower) === 'number' && typeof ms(p.value, upper) === 'number',
    error: (iss) => o.message(formatDuration(ms(iss.input, lower)), formatDuration(ms(iss.input, upper))),
  });
}

/** A section (or part of one) whose every key has a default: unknown keys refused, and left out it is `{}`. */
export function section<T extends z.ZodRawShape>(description: string, shape: T) {
  return z.strictObject(shape).prefault({} as never).describe(description);
}

/** A duration (`500ms`, `10s`, `5m`, `1h`, `1d`, or compound `1h30m`), parsed to milliseconds. */
export function duration(description: string, options: { positive?: boolean } = {}) {
  return leaf(description, DURATION_JSON, (v) => parseDurationValue(v, { min: options.positive ? 1 : 0 }));
}

/** A size (integer bytes or `64MiB`-style), parsed to bytes. */
export function size(description: string, options: { positive?: boolean } = {}) {
  return leaf(description, SIZE_JSON, (v) => parseSizeValue(v, { min: options.positive ? 1 : 0 }));
}

/** A non-empty string (whitespace alone counts as empty). */
export function text(description: string, json: JsonMeta = {}) {
  return leaf(description, { type: 'string', minLength: 1, ...json }, (v) => {
    if (typeof v !== 'string') return new Fail(`expected a non-empty string, got ${show(v)}`);
    if (v.trim() === '') return new Fail('expected a non-empty string');
    return v;
  });
}

/** A secret string: never echoed in problems, and scrubbed from logs. */
export function secret(description: string) {
  const field = leaf(description, { type: 'string', minLength: 1 }, (v) => {
    if (typeof v !== 'string') return new Fail(`expected a string (the value is not shown because it is secret)`);
    if (v.trim() === '') return new Fail('is empty; set a value or remove the key');
    if (/[\r\n]/.test(v)) return new Fail('contains a line break; remove it (the value is not shown because it is secret)');
    return v;
  });
  return mark(field, { secret: true });
}

/** Where a sink's credentials go instead of its URL (the problem's path names the sink). */
export const SINK_CREDENTIALS =
  "must not carry credentials (user:password@); remove them and send them as a header of this sink instead, e.g. headers: { Authorization: 'Basic ${MLS_SINK_AUTH}' } with MLS_SINK_AUTH set to the base64 of user:password";

/**
 * An http(s) URL. `stripSlash` drops trailing slashes so paths can be appended;
 * `credentials` says where credentials go instead of the URL (default: the API token).
 */
export function httpUrl(description: string, options: { stripSlash?: boolean; noQuery?: boolean; credentials?: string } = {}) {
  return leaf(description, { type: 'string', format: 'uri', pattern: '^https?://' }, (v) => {
    if (typeof v !== 'string' || v.trim() === '') return new Fail(`expected an http or https URL, got ${show(v)}`);
    const url = URL.parse(v.trim());
    if (!url) return new Fail(`${show(v)} is not a URL; write e.g. https://api.example.com`);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return new Fail(`${show(url.protocol)} is not supported; the URL must start with http:// or https://`);
    }
    if (options.noQuery && (url.search !== '' || url.hash !== '')) {
      return new Fail('must not carry a query string or fragment; keep only scheme, host, port and path prefix');
    }
    if (url.username !== '' || url.password !== '') {
      return new Fail(options.credentials ?? 'must not carry credentials; put the token in api.token or api.token_file');
    }
    const out = v.trim();
    return options.stripSlash ? out.replace(/\/+$/, '') : out;
  });
}

/**
 * An endpoint's proxy: an http(s) URL, credentials allowed (the field is secret), or `none`,
 * parsed to `false`, to connect directly whatever the environment says. Absent, the
 * environment's HTTP_PROXY, HTTPS_PROXY and NO_PROXY apply (net/proxy.ts).
 */
export function proxyUrl(description: string) {
  const field = leaf<string | false>(description, { type: 'string', anyOf: [{ const: 'none' }, { format: 'uri', pattern: '^https?://' }] }, (v) => {
    if (typeof v === 'string' && v.trim() === 'none') return false;
    // the value may hold credentials: it is not shown
    const url = typeof v === 'string' ? URL.parse(v.trim()) : null;
    if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
      return new Fail('expected an http:// or https:// proxy URL such as http://proxy.example:3128, or none (the value is not shown because it may hold credentials)');
    }
    return url.href;
  });
  return mark(field, { secret: true });
}

/** A file path, resolved by the loader against the directory of the config file. */
export function filePath(description: string) {
  return mark(text(`${description} Relative paths are resolved against the directory of the config file.`), { path: 'file' });
}

/** A map of names to string values (numbers and booleans are turned into strings); `secret` marks every value secret. */
export function stringMap(description: string, options: { headers?: boolean; secret?: boolean } = {}) {
  const valueJson = { type: ['string', 'number', 'boolean'] };
  const field = leaf(description, { type: 'object', additionalProperties: valueJson }, (v, nested) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return new Fail(`expected a mapping of names to values, got ${show(v)}`);
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v)) {
      const problem = mapEntryProblem(k, val, options.headers === true);
      if (problem === undefined) out[k] = String(val);
      else nested.push({ path: [k], message: problem });
    }
    return out;
  });
  return options.secret ? mark(field, { secret: true }) : field;
}

/** What is wrong with one entry of a {@link stringMap}, if anything. */
function mapEntryProblem(name: string, value: unknown, headers: boolean): string | undefined {
  if (headers && !HTTP_TOKEN.test(name)) return 'is not a valid HTTP header name; use letters, digits and - (e.g. X-Api-Key)';
  if (name === '') return 'names must not be empty';
  if (typeof value === 'string') return headers && /[\r\n]/.test(value) ? 'contains a line break, which HTTP headers cannot carry; remove it' : undefined;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return undefined;
  return `expected a string, got ${headers ? 'another kind of value' : show(value)}`;
}

/** Request headers (or gRPC metadata) whose values are secrets. */
export function secretHeaders(description: string) {
  return stringMap(description, { headers: true, secret: true });
}
