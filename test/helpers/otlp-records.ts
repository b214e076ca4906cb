//! What an OTLP receiver decodes: the OTLP `.proto` definitions of test/fixtures/otlp-proto,
//! loaded with protobufjs independently of the exporters' own serializers, and an
//! `ExportLogsServiceRequest` flattened into one record per log record with its resource.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export const PROTO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'otlp-proto');
export const SERVICE_PROTO = 'opentelemetry/proto/collector/logs/v1/logs_service.proto';

/** One log record as received, with its resource's attributes. */
export interface ReceivedLogRecord {
  body: string;
  /** Exact nanoseconds (decoded from fixed64 / the JSON string). */
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  severityText?: string;
  severityNumber?: number;
  /** Name of the instrumentation scope. */
  scope?: string;
  /** `trace_id` as lowercase hex, when the record has one. */
  traceId?: string;
  /** `span_id` as lowercase hex, when the record has one. */
  spanId?: string;
  /** The record's `flags`, when not 0. */
  flags?: number;
  /** The attributes with the kind of each OTLP `AnyValue` kept (see {@link TypedValue}). */
  typedAttributes: Record<string, TypedValue>;
}

/**
 * An OTLP `AnyValue` with its kind: `{ int: n }` (a bigint beyond the safe range),
 * `{ double: n }`, `{ string }`, `{ bool }`, `{ bytes }` (base64), `{ array: [...] }`,
 * `{ kvlist: {...} }`, or `null` for an empty value.
 */
export type TypedValue =
  | { int: number | bigint }
  | { double: number }
  | { string: string }
  | { bool: boolean }
  | { bytes: string }
  | { array: TypedValue[] }
  | { kvlist: Record<string, TypedValue> }
  | null;

/** A decoded message as a plain object. */
export type Json = Record<string, unknown>;

let rootPromise: Promise<protobuf.Root> | undefined;
/** The OTLP logs service's definitions, loaded once. */
export function loadRoot(): Promise<protobuf.Root> {
  rootPromise ??= (async () => {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : join(PROTO_ROOT, target));
    await root.load(SERVICE_PROTO, { keepCase: false });
    root.resolveAll();
    return root;
  })();
  return rootPromise;
}

/** How decoded messages become plain objects: 64-bit integers as strings, bytes as base64. */
export const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: String, defaults: false, oneofs: true };

function anyValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return undefined;
  const o = v as Json;
  if ('stringValue' in o) return o.stringValue;
  if ('boolValue' in o) return o.boolValue;
  if ('intValue' in o) {
    const n = BigInt(String(o.intValue));
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  }
  if ('doubleValue' in o) return Number(o.doubleValue);
  if ('bytesValue' in o) return Buffer.from(String(o.bytesValue), 'base64');
  if ('arrayValue' in o) return (((o.arrayValue as Json | undefined)?.values as unknown[] | undefined) ?? []).map(anyValue);
  if ('kvlistValue' in o) return keyValues((o.kvlistValue as Json | undefined)?.values);
  return undefined;
}

/** Sets a key as an own property, `__proto__` included. */
function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function typedValue(v: unknown): TypedValue {
  if (v === null || typeof v !== 'object') return null;
  const o = v as Json;
  if ('stringValue' in o) return { string: String(o.stringValue) };
  if ('boolValue' in o) return { bool: Boolean(o.boolValue) };
  if ('intValue' in o) {
    const n = BigInt(String(o.intValue));
    return { int: n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n };
  }
  if ('doubleValue' in o) return { double: Number(o.doubleValue) };
  if ('bytesValue' in o) return { bytes: String(o.bytesValue) };
  if ('arrayValue' in o) return { array: (((o.arrayValue as Json | undefined)?.values as unknown[] | undefined) ?? []).map(typedValue) };
  if ('kvlistValue' in o) {
    const out: Record<string, TypedValue> = {};
    for (const kv of ((o.kvlistValue as Json | undefined)?.values as Json[] | undefined) ?? []) setOwn(out, String(kv.key), typedValue(kv.value));
    return { kvlist: out };
  }
  return null;
}

function typedKeyValues(list: unknown): Record<string, TypedValue> {
  const out: Record<string, TypedValue> = {};
  for (const kv of (list as Json[] | undefined) ?? []) setOwn(out, String(kv.key), typedValue(kv.value));
  return out;
}

/** A bytes field decoded as base64 (`bytes: String`), as lowercase hex; undefined when empty. */
function hexId(v: unknown): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  return Buffer.from(v, 'base64').toString('hex');
}

/**
 * OTLP/JSON writes trace and span ids in hex, where protobuf's JSON mapping (which
 * `fromObject` follows) expects base64: the ids are turned into base64 before decoding.
 */
export function hexIdsToBase64(request: Json): void {
  for (const rl of (request.resourceLogs as Json[] | undefined) ?? []) {
    for (const sl of (rl.scopeLogs as Json[] | undefined) ?? []) {
      for (const lr of (sl.logRecords as Json[] | undefined) ?? []) {
        for (const key of ['traceId', 'spanId']) {
          const id = lr[key];
          if (typeof id === 'string') lr[key] = Buffer.from(id, 'hex').toString('base64');
        }
      }
    }
  }
}

function keyValues(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of (list as Json[] | undefined) ?? []) setOwn(out, String(kv.key), anyValue(kv.value));
  return out;
}

function toNanos(v: unknown): bigint {
  return v === undefined || v === null || v === '' ? 0n : BigInt(String(v));
}

/** Flattens an `ExportLogsServiceRequest` (as a plain object with camelCase keys) into records. */
export function flatten(request: Json): { records: ReceivedLogRecord[]; resourceLogs: number } {
  const records: ReceivedLogRecord[] = [];
  const resourceLogs = (request.resourceLogs as Json[] | undefined) ?? [];
  for (const rl of resourceLogs) {
    const resource = keyValues((rl.resource as Json | undefined)?.attributes);
    for (const sl of (rl.scopeLogs as Json[] | undefined) ?? []) {
      const scope = (sl.scope as Json | undefined)?.name;
      for (const lr of (sl.logRecords as Json[] | undefined) ?? []) {
        const body = anyValue(lr.body);
        const record: ReceivedLogRecord = {
          body: typeof body === 'string' ? body : JSON.stringify(body ?? null),
          timeUnixNano: toNanos(lr.timeUnixNano),
          observedTimeUnixNano: toNanos(lr.observedTimeUnixNano),
          attributes: keyValues(lr.attributes),
          typedAttributes: typedKeyValues(lr.attributes),
          resource,
        };
        const traceId = hexId(lr.traceId);
        if (traceId !== undefined) record.traceId = traceId;
        const spanId = hexId(lr.spanId);
        if (spanId !== undefined) record.spanId = spanId;
        if (lr.flags !== undefined && Number(lr.flags) !== 0) record.flags = Number(lr.flags);
        if (typeof lr.severityText === 'string' && lr.severityText !== '') record.severityText = lr.severityText;
        if (lr.severityNumber !== undefined && Number(lr.severityNumber) !== 0) record.severityNumber = Number(lr.severityNumber);
        if (typeof scope === 'string') record.scope = scope;
        records.push(record);
      }
    }
  }
  return { records, resourceLogs: resourceLogs.length };
}
