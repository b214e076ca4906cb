//! A record's OTLP attributes and trace context: the sink's own attributes, a JSON line's
//! fields with their JSON types, a grouped record's line count and end time, a traceback's
//! exception (the semantic conventions' `exception.*`), and the trace and span ids as the
//! record's span context when they are valid.
import { TraceFlags, type Attributes, type SpanContext } from '@opentelemetry/api';
import type { SinkEntry } from '../contract.js';

/** Attribute carrying the stream (`stdout`, `stderr`, …), from the semantic conventions. */
export const ATTR_LOG_IOSTREAM = 'log.iostream';
/** Attribute carrying the model id. */
export const ATTR_MODEL_ID = 'mls.model_id';
/** Attribute carrying the number of lines of a record that holds several (a traceback). */
export const ATTR_RECORD_LINES = 'mls.record.lines';
/** Attribute carrying the last line's time string of a record that holds several. */
export const ATTR_RECORD_TIME_END = 'mls.record.time_end';
// A traceback's exception: type, message and stack trace (the record's text) from the semantic
// conventions, and ours, the types of the exceptions chained before it (a string array).
const ATTR_EXCEPTION_TYPE = 'exception.type';
const ATTR_EXCEPTION_MESSAGE = 'exception.message';
const ATTR_EXCEPTION_STACKTRACE = 'exception.stacktrace';
const ATTR_EXCEPTION_CHAIN = 'exception.chain';
/** Prefix of a JSON field named like one of the sink's own attributes. */
export const JSON_FIELD_PREFIX = 'json.';

const OWN_KEYS: ReadonlySet<string> = new Set([
  ATTR_LOG_IOSTREAM,
  ATTR_MODEL_ID,
  ATTR_RECORD_LINES,
  ATTR_RECORD_TIME_END,
  ATTR_EXCEPTION_TYPE,
  ATTR_EXCEPTION_MESSAGE,
  ATTR_EXCEPTION_STACKTRACE,
  ATTR_EXCEPTION_CHAIN,
]);

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ALL_ZEROS = /^0+$/;
/** Whole numbers the exporters write as a 64-bit `intValue`: [-2^63, 2^63). */
const INT64_MIN = -(2 ** 63);
const INT64_END = 2 ** 63;

/** 32 lowercase hex digits, not all zeros. */
export function validTraceId(id: string | undefined): id is string {
  return id !== undefined && TRACE_ID.test(id) && !ALL_ZEROS.test(id);
}

/** 16 lowercase hex digits, not all zeros. */
export function validSpanId(id: string | undefined): id is string {
  return id !== undefined && SPAN_ID.test(id) && !ALL_ZEROS.test(id);
}

/**
 * The record's span context: its trace id, with its span id when that is valid too. The
 * trace flags are not known from a log line: 0. Undefined without a valid trace id (a span
 * id alone names nothing).
 */
export function spanContextOf(e: SinkEntry): SpanContext | undefined {
  if (!validTraceId(e.traceId)) return undefined;
  return { traceId: e.traceId, spanId: validSpanId(e.spanId) ? e.spanId : '', traceFlags: TraceFlags.NONE };
}

/**
 * The attributes of a record: `log.iostream` and `mls.model_id`; a JSON line's fields
 * (a field named like one of the sink's own attributes gets the prefix `json.`, and so does
 * any field that would then collide with it); `mls.record.lines` and `mls.record.time_end`
 * for a record of several lines; `exception.type`, `exception.message`,
 * `exception.stacktrace` (the record's text) and `exception.chain` for a traceback's; a trace
 * or span id that is not valid as `trace_id` / `span_id`, unless the JSON line has a field of
 * that name.
 */
export function recordAttributes(e: SinkEntry): Attributes {
  const out: Attributes = { [ATTR_LOG_IOSTREAM]: e.stream.toWellFormed(), [ATTR_MODEL_ID]: e.modelId };
  if (e.attributes !== undefined) {
    for (const key of Object.keys(e.attributes)) {
      const value = anyValue(e.attributes[key]);
      // A JSON field named `__proto__` is an ordinary attribute, not the object's prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[attributeKey(key.toWellFormed())] = value;
    }
  }
  if (e.lines !== undefined) {
    out[ATTR_RECORD_LINES] = e.lines;
    if (e.timeEnd !== undefined) out[ATTR_RECORD_TIME_END] = e.timeEnd;
  }
  if (e.exception !== undefined) {
    // Types are ASCII names (exception.ts); the message and the text may hold lone surrogates.
    out[ATTR_EXCEPTION_TYPE] = e.exception.type;
    if (e.exception.message !== undefined) out[ATTR_EXCEPTION_MESSAGE] = e.exception.message.toWellFormed();
    out[ATTR_EXCEPTION_STACKTRACE] = e.log.toWellFormed();
    if (e.exception.chain !== undefined) out[ATTR_EXCEPTION_CHAIN] = e.exception.chain;
  }
  const traced = validTraceId(e.traceId);
  if (e.traceId !== undefined && !traced && !Object.hasOwn(out, 'trace_id')) out.trace_id = e.traceId;
  if (e.spanId !== undefined && !(traced && validSpanId(e.spanId)) && !Object.hasOwn(out, 'span_id')) out.span_id = e.spanId;
  return out;
}

/**
 * The name a JSON field is sent under. Prefixing every field whose name, stripped of leading
 * `json.`, is one of the sink's own keys keeps names distinct: `log.iostream` becomes
 * `json.log.iostream`, and a field already named `json.log.iostream` becomes
 * `json.json.log.iostream`.
 */
function attributeKey(key: string): string {
  let bare = key;
  while (bare.startsWith(JSON_FIELD_PREFIX)) bare = bare.slice(JSON_FIELD_PREFIX.length);
  return OWN_KEYS.has(bare) ? JSON_FIELD_PREFIX + key : key;
}

/**
 * A JSON value as an attribute value. The exporters encode strings, booleans, arrays and
 * objects (as `kvlistValue`) as they are, a whole number as `intValue` and any other number
 * as `doubleValue`, `null` as an empty value. A whole number outside the 64-bit range
 * cannot be an `intValue`, nor can OTLP/JSON write an infinite `doubleValue` (`1e400` in a
 * line), and receivers refuse the whole request for either: such a number is sent as the
 * string JavaScript writes for it. A lone surrogate in a string or a key becomes U+FFFD
 * (OTLP strings are UTF-8). The value itself is returned when nothing changes.
 */
export function anyValue(v: unknown): unknown {
  if (typeof v === 'number') return !Number.isFinite(v) || (Number.isInteger(v) && (v < INT64_MIN || v >= INT64_END)) ? String(v) : v;
  if (typeof v === 'string') return v.toWellFormed();
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const mapped = anyValue(v[i]);
      if (mapped !== v[i]) (copy ??= v.slice())[i] = mapped;
    }
    return copy ?? v;
  }
  const obj = v as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    const mapped = anyValue(obj[key]);
    const well = key.toWellFormed();
    if (mapped === obj[key] && well === key) continue;
    if (copy === undefined) {
      copy = Object.create(null) as Record<string, unknown>;
      for (const k of Object.keys(obj)) copy[k] = obj[k];
    }
    if (well !== key) delete copy[key];
    copy[well] = mapped;
  }
  return copy ?? v;
}
