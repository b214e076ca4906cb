//! Processed records for the conformance suite, and what each sink type must make of them,
//! written out field by field (not with the renderers under test): the NDJSON line of the
//! file, stdout and webhook sinks, the example module's line, and the OTLP log record
//! (a traceback's exception among its fields).
import { recordBatch } from '../../../src/delivery/batch.js';
import type { RecordFields, RecordLevel } from '../../../src/records/entry.js';
import type { SinkBatch, SinkEntry } from '../../../src/sinks/contract.js';
import { parseEntryTime } from '../../../src/time/timestamp.js';
import type { ReceivedLogRecord, TypedValue } from '../../helpers/otlp-records.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

/** The stream → severity mapping of the OTLP destination (for records without a level). */
export const OTLP_STREAM_SEVERITY = { stderr: 'ERROR' } as const;

/** The service's time string of journal line `seq` (1 µs apart). */
function timeOf(seq: number): string {
  return `2026-11-22T10:00:00.${String(seq * 1000).padStart(9, '0')}Z`;
}

function rec(seq: number, modelId: string, stream: string, log: string, fields: RecordFields = {}): SinkEntry {
  const time = timeOf(seq);
  const parsed = parseEntryTime(time);
  if (!parsed.ok) throw new Error(`bad time ${time}`);
  return { seq, modelId, time, timeNs: parsed.ns, stream, log, fetchedAtMs: 1_795_341_700_000 + seq, ...fields };
}

function traceback(first: number, n: number, what: string, chain?: string[]): Pick<SinkEntry, 'log'> & RecordFields {
  const body = Array.from({ length: n - 2 }, (_, i) => `  File "app.py", line ${i + 1}, in <module>`);
  const lines = ['Traceback (most recent call last):', ...body, `KeyError: '${what}'`];
  const exception = { type: 'KeyError', message: `'${what}'`, ...(chain ? { chain } : {}) };
  return { log: lines.join('\n'), lines: n, timeEnd: timeOf(first + n - 1), level: 'error', levelText: 'ERROR', exception };
}

/**
 * The records of three consecutive batches over journal lines 1–10, 11–20 and 21–30, as
 * processing makes them: plain lines, levels in several spellings, JSON lines with and
 * without a message, trace ids, tracebacks (one opened in the first batch's lines and
 * closed in the second), two models.
 */
function recordsOf(batch: 1 | 2 | 3): SinkEntry[] {
  switch (batch) {
    case 1:
      return [
        rec(1, 'm1', 'stdout', 'proc plain 1'),
        rec(2, 'm1', 'stdout', 'INFO proc ready 2', { level: 'info', levelText: 'INFO' }),
        rec(3, 'm1', 'stdout', `{"level":"warning","message":"proc slow 3","latency_ms":250,"ratio":0.5,"cached":true,"tags":["a","b"],"ctx":{"route":"/v1"},"trace_id":"${TRACE}","span_id":"${SPAN}"}`, {
          level: 'warn',
          levelText: 'warning',
          message: 'proc slow 3',
          attributes: { latency_ms: 250, ratio: 0.5, cached: true, tags: ['a', 'b'], ctx: { route: '/v1' } },
          traceId: TRACE,
          spanId: SPAN,
        }),
        { ...rec(4, 'm1', 'stderr', ''), ...traceback(4, 3, 'proc 4') },
        rec(7, 'm2', 'stderr', 'proc m2 plain 7'),
        rec(8, 'm2', 'stdout', 'W1122 proc m2 letter 8', { level: 'warn', levelText: 'W' }),
      ];
    case 2:
      return [
        { ...rec(9, 'm1', 'stderr', ''), ...traceback(9, 4, 'proc 9', ['json.decoder.JSONDecodeError', 'ValueError']) },
        rec(13, 'm1', 'stdout', '{"user":"proc 13","n":13,"trace_id":"' + TRACE + '"}', { attributes: { user: 'proc 13', n: 13 }, traceId: TRACE }),
        rec(14, 'm1', 'stdout', 'DEBUG proc 14', { level: 'debug', levelText: 'DEBUG' }),
        rec(15, 'm1', 'stderr', 'proc plain 15'),
      ];
    case 3:
      return [
        rec(21, 'm1', 'stdout', 'CRITICAL proc 21', { level: 'fatal', levelText: 'CRITICAL' }),
        rec(22, 'm2', 'stdout', '{"msg":"proc m2 json 22"}', { message: 'proc m2 json 22', attributes: {} }),
        rec(23, 'm1', 'stdout', 'proc trace 23', { level: 'trace' }),
      ];
  }
}

/** Batch `n` of processed records, built as the delivery loop builds one (a new object each call). */
export function processedBatch(n: 1 | 2 | 3): { batch: SinkBatch; records: SinkEntry[] } {
  const records = recordsOf(n);
  const firstSeq = (n - 1) * 10 + 1;
  return { batch: recordBatch(`records-${n}`, firstSeq, firstSeq + 9, records), records };
}

/** The NDJSON line (without its newline) the file, stdout and webhook sinks write for a record. */
export function ndjsonRecordLine(e: SinkEntry): string {
  const o: Record<string, unknown> = { model_id: e.modelId, time: e.time, stream: e.stream, log: e.log };
  if (e.level !== undefined) o.level = e.level;
  if (e.lines !== undefined) {
    o.lines = e.lines;
    o.time_end = e.timeEnd;
  }
  if (e.exception !== undefined) o.exception = e.exception;
  if (e.message !== undefined) o.message = e.message;
  if (e.attributes !== undefined) o.attributes = e.attributes;
  if (e.traceId !== undefined) o.trace_id = e.traceId;
  if (e.spanId !== undefined) o.span_id = e.spanId;
  return JSON.stringify(o);
}

/** The line config/examples/custom-sink.example.js writes for a record. */
export function moduleRecordLine(e: SinkEntry): string {
  return JSON.stringify({ seq: e.seq, model_id: e.modelId, time: e.time, stream: e.stream, log: e.log });
}

const SEVERITY: Readonly<Record<RecordLevel, number>> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 };
const STREAM_SEVERITY: Readonly<Record<string, number>> = { TRACE: 1, DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17, FATAL: 21 };

function typed(v: unknown): TypedValue {
  if (typeof v === 'string') return { string: v };
  if (typeof v === 'boolean') return { bool: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { int: v } : { double: v };
  if (Array.isArray(v)) return { array: v.map(typed) };
  if (typeof v === 'object' && v !== null) return { kvlist: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typed(x)])) };
  return null;
}

/** Sorts object keys at every depth: the order of OTLP attributes carries no meaning. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
  );
}

interface OtlpView {
  time: string;
  body: string;
  severityText: string | undefined;
  severityNumber: number | undefined;
  attributes: Record<string, TypedValue>;
  traceId: string | undefined;
  spanId: string | undefined;
}

function otlpLine(v: OtlpView): string {
  return JSON.stringify(canonical(v));
}

/** The OTLP log record the sink must export for a record (mapping of the README's OTLP section). */
export function otlpRecordLine(e: SinkEntry): string {
  const attributes: Record<string, TypedValue> = { 'log.iostream': { string: e.stream }, 'mls.model_id': { string: e.modelId } };
  for (const [k, v] of Object.entries(e.attributes ?? {})) attributes[k] = typed(v);
  if (e.lines !== undefined) {
    attributes['mls.record.lines'] = { int: e.lines };
    attributes['mls.record.time_end'] = { string: e.timeEnd! };
  }
  if (e.exception !== undefined) {
    attributes['exception.type'] = { string: e.exception.type };
    if (e.exception.message !== undefined) attributes['exception.message'] = { string: e.exception.message };
    attributes['exception.stacktrace'] = { string: e.log };
    if (e.exception.chain !== undefined) attributes['exception.chain'] = { array: e.exception.chain.map((t) => ({ string: t })) };
  }
  const byStream = e.level === undefined ? (OTLP_STREAM_SEVERITY as Record<string, string>)[e.stream] : undefined;
  return otlpLine({
    time: String(e.timeNs),
    body: e.message ?? e.log,
    severityText: e.level !== undefined ? (e.levelText ?? e.level.toUpperCase()) : byStream,
    severityNumber: e.level !== undefined ? SEVERITY[e.level] : byStream !== undefined ? STREAM_SEVERITY[byStream] : undefined,
    attributes,
    traceId: e.traceId,
    spanId: e.spanId,
  });
}

/** A received OTLP log record in the form of {@link otlpRecordLine}. */
export function receivedOtlpLine(r: ReceivedLogRecord): string {
  return otlpLine({
    time: String(r.timeUnixNano),
    body: r.body,
    severityText: r.severityText,
    severityNumber: r.severityNumber,
    attributes: r.typedAttributes,
    traceId: r.traceId,
    spanId: r.spanId,
  });
}
