//! Structured (JSON object) log lines: the message, the trace context, the level and time
//! fields lifted out of the object, everything else kept as attributes; redaction applied to
//! every string of the object, as it will be shipped. Pure: the same line always gives the
//! same result.
import type { Redactor } from './redact.js';

/** A raw field of the object, with the key it was found under. */
export interface JsonField {
  key: string;
  value: unknown;
}

/** A log line that is one JSON object. */
export interface JsonLine {
  /**
   * The first of `message`, `msg`, `event` holding a string (removed from `attributes`); for a
   * loguru `serialize=True` line, `record.message`. `undefined` when none is a string.
   */
  message: string | undefined;
  /**
   * The object's other fields, JSON types kept, nested objects kept as objects. Fields this
   * module lifted out (the message, the level field, a valid trace or span id) are not in it.
   * For loguru, the fields of `record`; its `text` (the same line, formatted) is dropped.
   */
  attributes: Record<string, unknown>;
  /**
   * 32 lowercase hex digits, from `trace_id`, `traceId`, `otelTraceID`, `trace.id`,
   * `dd.trace_id` (flat or nested under `dd`). Only a valid, non-zero id is taken (and then
   * removed from `attributes`); anything else stays an attribute. A decimal Datadog id (64-bit)
   * (`dd.*` keys only, string or safe-integer number) is converted to hex, zero-padded on the
   * left as OpenTelemetry's Datadog interop does; a `dd` object left empty is removed.
   */
  traceId?: string;
  /** 16 lowercase hex digits, from `span_id`, `spanId`, `otelSpanID`, `span.id`, `dd.span_id`; same rules. */
  spanId?: string;
  /**
   * The raw value of the first present `level`, `levelname`, `severity`, `lvl` (for loguru,
   * `record.level.name`). Removed from `attributes`: the level module turns it into a level.
   */
  levelField?: JsonField;
  /**
   * The raw value of the first present `timestamp`, `time`, `asctime`, `@timestamp`. Kept in
   * `attributes` too: the record's time stays the journal entry's time, so this is information only.
   */
  timeField?: JsonField;
  /**
   * When redaction changed a string of the object (a value at any depth, or a key): the
   * redacted object written as JSON, to ship instead of the line as written (whose escaped
   * form the rules, reading text, may not have matched: `secret-\u0031\u0032\u0033`).
   */
  redactedText?: string;
}

/**
 * Objects and arrays nested deeper than this leave a line as text: every encoder downstream
 * (JSON.stringify, the OTLP exporters) recurses, and 10,000 levels overflow its stack.
 */
export const MAX_JSON_DEPTH = 64;

const MESSAGE_KEYS = ['message', 'msg', 'event'] as const;
const LEVEL_KEYS = ['level', 'levelname', 'severity', 'lvl'] as const;
const TIME_KEYS = ['timestamp', 'time', 'asctime', '@timestamp'] as const;
const TRACE_KEYS = ['trace_id', 'traceId', 'otelTraceID', 'trace.id', 'dd.trace_id'] as const;
const SPAN_KEYS = ['span_id', 'spanId', 'otelSpanID', 'span.id', 'dd.span_id'] as const;

const HEX32 = /^[0-9a-fA-F]{32}$/;
const HEX16 = /^[0-9a-fA-F]{16}$/;
const DECIMAL = /^[0-9]{1,20}$/;
const U64_MAX = (1n << 64n) - 1n;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Parses a line that is one JSON object (surrounding whitespace allowed), nested at most
 * {@link MAX_JSON_DEPTH} deep, applying `redact` to each of its strings. Arrays, scalars,
 * broken JSON, deeper objects and anything else give `undefined`; never throws.
 */
export function parseJsonLine(log: string, redact?: Redactor): JsonLine | undefined {
  // Most lines are plain text: decide on the first and last characters before parsing.
  if (!mayBeJsonObject(log)) return undefined;
  const text = log.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Broken JSON is an ordinary text line, not an error.
    return undefined;
  }
  if (!isObject(parsed) || deeperThan(parsed, MAX_JSON_DEPTH)) return undefined;
  const redacted = redact === undefined ? parsed : (redactJson(parsed, redact) as Record<string, unknown>);
  // Written before the fields are lifted out of the object.
  const redactedText = redacted === parsed ? undefined : JSON.stringify(redacted);
  const loguru = loguruRecord(redacted);
  const line = loguru ? fromLoguru(loguru) : fromFlat(redacted);
  if (redactedText !== undefined) line.redactedText = redactedText;
  return line;
}

/** Whether objects and arrays nest in `value` more than `limit` deep. */
function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value)) if (deeperThan(v, limit - 1)) return true;
  return false;
}

/**
 * `value` (parsed JSON) with `redact` applied to every string in it, keys included; the value
 * itself when nothing changed, else copies of what changed. A key that redacts to one already
 * there replaces that one's value.
 */
export function redactJson(value: unknown, redact: Redactor): unknown {
  if (typeof value === 'string') return redact(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((v, i) => {
      const r = redactJson(v, redact);
      if (r !== v) (copy ??= value.slice())[i] = r;
    });
    return copy ?? value;
  }
  const entries = Object.entries(value).map(([k, v]) => [k, v, redact(k), redactJson(v, redact)] as const);
  if (entries.every(([k, v, rk, rv]) => k === rk && v === rv)) return value;
  const copy: Record<string, unknown> = {};
  // defineProperty: a key `__proto__` stays an ordinary field, as JSON.parse made it.
  for (const [, , k, v] of entries) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  return copy;
}

/**
 * Whether `log`, without the white space around it, starts with `{` and ends with `}`: the
 * only lines {@link parseJsonLine} reads. Decided on the first and last characters of most
 * lines, without trimming a copy.
 */
export function mayBeJsonObject(log: string): boolean {
  const first = log.charCodeAt(0);
  const last = log.charCodeAt(log.length - 1);
  // Printable ASCII is not white space: such an end decides alone.
  if (first > 0x20 && first < 0x7f) {
    if (first !== OPEN_BRACE) return false;
    if (last > 0x20 && last < 0x7f) return last === CLOSE_BRACE;
  } else if (log.length === 0) return false;
  const text = log.trim();
  return text.charCodeAt(0) === OPEN_BRACE && text.charCodeAt(text.length - 1) === CLOSE_BRACE;
}

function fromFlat(attrs: Record<string, unknown>): JsonLine {
  // The parsed object is ours: lifting fields out with `delete` avoids copying it, and keeps
  // an own `__proto__` key an ordinary attribute.
  const line: JsonLine = { message: undefined, attributes: attrs };
  for (const key of MESSAGE_KEYS) {
    const v = attrs[key];
    if (typeof v === 'string' && Object.hasOwn(attrs, key)) {
      line.message = v;
      delete attrs[key];
      break;
    }
  }
  const level = takeFirst(attrs, LEVEL_KEYS, true);
  if (level) line.levelField = level;
  const time = takeFirst(attrs, TIME_KEYS, false);
  if (time) line.timeField = time;
  const traceId = takeId(attrs, TRACE_KEYS, 32);
  if (traceId !== undefined) line.traceId = traceId;
  const spanId = takeId(attrs, SPAN_KEYS, 16);
  if (spanId !== undefined) line.spanId = spanId;
  return line;
}

/** loguru's `serialize=True`: `{"text": "<formatted line>", "record": {...}}`. */
function loguruRecord(obj: Record<string, unknown>): Record<string, unknown> | undefined {
  const keys = Object.keys(obj);
  if (keys.length !== 2 || typeof obj.text !== 'string' || !isObject(obj.record)) return undefined;
  const record = obj.record;
  return typeof record.message === 'string' && isObject(record.level) ? record : undefined;
}

function fromLoguru(record: Record<string, unknown>): JsonLine {
  const line: JsonLine = { message: record.message as string, attributes: record };
  delete record.message;
  const level = record.level as Record<string, unknown>;
  line.levelField = { key: 'record.level.name', value: level.name };
  delete record.level;
  if (Object.hasOwn(record, 'time')) line.timeField = { key: 'record.time', value: record.time };
  // Values bound with logger.bind()/contextualize() (where trace ids live) are in `extra`.
  if (isObject(record.extra)) {
    const traceId = takeId(record.extra, TRACE_KEYS, 32);
    if (traceId !== undefined) line.traceId = traceId;
    const spanId = takeId(record.extra, SPAN_KEYS, 16);
    if (spanId !== undefined) line.spanId = spanId;
  }
  return line;
}

function takeFirst(attrs: Record<string, unknown>, keys: readonly string[], remove: boolean): JsonField | undefined {
  for (const key of keys) {
    if (!Object.hasOwn(attrs, key)) continue;
    const field = { key, value: attrs[key] };
    if (remove) delete attrs[key];
    return field;
  }
  return undefined;
}

/** The first valid id under one of `keys` (flat, or `a.b` nested one level), removed from `attrs`. */
function takeId(attrs: Record<string, unknown>, keys: readonly string[], hexDigits: 16 | 32): string | undefined {
  for (const key of keys) {
    const decimal = key.startsWith('dd.');
    if (Object.hasOwn(attrs, key)) {
      const id = normalizeId(attrs[key], hexDigits, decimal);
      if (id !== undefined) {
        delete attrs[key];
        return id;
      }
      continue;
    }
    const dot = key.indexOf('.');
    if (dot < 0) continue;
    const parentKey = key.slice(0, dot);
    const parent = attrs[parentKey];
    const child = key.slice(dot + 1);
    if (!isObject(parent) || !Object.hasOwn(parent, child)) continue;
    const id = normalizeId(parent[child], hexDigits, decimal);
    if (id !== undefined) {
      delete parent[child];
      if (Object.keys(parent).length === 0) delete attrs[parentKey];
      return id;
    }
  }
  return undefined;
}

function normalizeId(value: unknown, hexDigits: 16 | 32, decimal: boolean): string | undefined {
  let id: string | undefined;
  if (typeof value === 'string') {
    // Datadog's 64-bit ids are always decimal, even when they happen to be 16 digits long.
    if (decimal && DECIMAL.test(value)) id = decimalToHex(value, hexDigits);
    else if ((hexDigits === 32 ? HEX32 : HEX16).test(value)) id = value.toLowerCase();
  } else if (decimal && typeof value === 'number' && Number.isSafeInteger(value) && value > 0) {
    // Larger numbers have already lost digits in JSON.parse: only safe integers are exact.
    id = decimalToHex(String(value), hexDigits);
  }
  return id === undefined || /^0+$/.test(id) ? undefined : id;
}

/** Datadog writes its 64-bit ids in decimal. */
function decimalToHex(decimal: string, hexDigits: 16 | 32): string | undefined {
  const n = BigInt(decimal);
  return n > U64_MAX ? undefined : n.toString(16).padStart(hexDigits, '0');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
