//! Processed records through the real OTLP exporters to a real receiver: severity from the
//! detected level (the stream mapping only without one), a JSON line's message as the body
//! and its fields as typed attributes, a grouped record's line count, trace and span ids as
//! the record's trace context, a traceback's exception as the semantic conventions'
//! `exception.*` attributes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sink, SinkEntry } from '../../../src/sinks/contract.js';
import { anyValue, createOtlpSink, validSpanId, validTraceId } from '../../../src/sinks/otlp/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import type { ReceivedLogRecord } from '../../helpers/otlp-records.js';
import { batchOf, capturingLogger, context, otlpConfig, record } from './helpers.js';

const signal = new AbortController().signal;

const PROTOCOLS = [
  { protocol: 'http/protobuf', kind: 'http' },
  { protocol: 'http/json', kind: 'http' },
  { protocol: 'grpc', kind: 'grpc' },
] as const;

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const OWN = { 'log.iostream': { string: 'stdout' }, 'mls.model_id': { string: 'model-a' } } as const;

/** A JSON line's fields as processing leaves them: parsed, so `__proto__` is an own key. */
const JSON_FIELDS = JSON.parse(
  JSON.stringify({
    path: '/data',
    free_bytes: 1234,
    negative: -5,
    ratio: 0.93,
    whole_double: 2.0,
    beyond_safe: 9007199254740994,
    beyond_int64: 1e21,
    ok: false,
    nothing: null,
    tags: ['a', 1, 2.5, true, null, 1e21],
    ctx: { user: { id: 7, name: 'ada' }, list: [] },
    'log.iostream': 'spoofed stream',
    'mls.model_id': 'spoofed model',
    'json.mls.model_id': 'already prefixed',
    'mls.record.lines': 99,
    'exception.type': 'spoofed type',
  }).replace('"path"', '"__proto__":"not a prototype","path"'),
) as Record<string, unknown>;

function records(): SinkEntry[] {
  return [
    record(1, { log: '{"level":"WARNING","message":"disk almost full"}', level: 'warn', levelText: 'WARNING', message: 'disk almost full', attributes: JSON_FIELDS, traceId: TRACE, spanId: SPAN }),
    record(2, {
      stream: 'stderr',
      log: 'Traceback (most recent call last):\n  File "serve.py", line 3, in <module>\nValueError: bad input',
      lines: 3,
      timeEnd: '2026-11-22T10:00:00.123457000Z',
      level: 'error',
      levelText: 'ERROR',
      exception: { type: 'ValueError', message: 'bad input', chain: ['KeyError', 'json.decoder.JSONDecodeError'] },
    }),
    record(3, { stream: 'stderr', log: 'no level here' }),
    record(4, { stream: 'stdout', log: 'no level, no mapping' }),
    record(5, { stream: 'stderr', log: 'I1122 10:00:00 glog info', level: 'info' }),
    record(6, { log: 'E1122 letter', level: 'error', levelText: 'E' }),
    record(7, { log: 'trace me', level: 'trace', levelText: 'TRACE' }),
    record(8, { log: 'python 10', level: 'debug', levelText: '10' }),
    record(9, { stream: 'stderr', log: 'CRITICAL boom', level: 'fatal', levelText: 'CRITICAL' }),
    // A JSON line without a message: the body is the line; ids that are not valid stay attributes.
    record(10, { log: '{"user":"ada"}', attributes: { user: 'ada' }, traceId: '0'.repeat(32), spanId: SPAN }),
    record(11, { log: 'trace id only', message: 'trace id only', attributes: {}, traceId: TRACE }),
    record(12, { log: 'bad span', traceId: TRACE, spanId: 'XYZ' }),
  ];
}

function summary(r: ReceivedLogRecord) {
  return { body: r.body, severityText: r.severityText, severityNumber: r.severityNumber, traceId: r.traceId, spanId: r.spanId };
}

describe.each(PROTOCOLS)('OTLP sink with processed records over $protocol', ({ protocol, kind }) => {
  let receiver: OtlpReceiver;
  let sink: Sink;

  beforeEach(async () => {
    receiver = await startOtlpReceiver({ protocol: kind });
    sink = await createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, protocol, timeout: '2s', severity: { stderr: 'WARN' } }), context(capturingLogger().logger));
  });
  afterEach(async () => {
    await sink.close();
    await receiver.close();
  });

  it('maps level, body, attributes and trace context of each record', async () => {
    expect(await sink.send(batchOf(records()), signal)).toEqual({ status: 'ok' });
    const got = receiver.logRecords();
    expect(got.map(summary)).toEqual([
      { body: 'disk almost full', severityText: 'WARNING', severityNumber: 13, traceId: TRACE, spanId: SPAN },
      { body: 'Traceback (most recent call last):\n  File "serve.py", line 3, in <module>\nValueError: bad input', severityText: 'ERROR', severityNumber: 17, traceId: undefined, spanId: undefined },
      // The stream mapping applies only where no level was detected.
      { body: 'no level here', severityText: 'WARN', severityNumber: 13, traceId: undefined, spanId: undefined },
      { body: 'no level, no mapping', severityText: undefined, severityNumber: undefined, traceId: undefined, spanId: undefined },
      { body: 'I1122 10:00:00 glog info', severityText: 'INFO', severityNumber: 9, traceId: undefined, spanId: undefined },
      { body: 'E1122 letter', severityText: 'E', severityNumber: 17, traceId: undefined, spanId: undefined },
      { body: 'trace me', severityText: 'TRACE', severityNumber: 1, traceId: undefined, spanId: undefined },
      { body: 'python 10', severityText: '10', severityNumber: 5, traceId: undefined, spanId: undefined },
      { body: 'CRITICAL boom', severityText: 'CRITICAL', severityNumber: 21, traceId: undefined, spanId: undefined },
      { body: '{"user":"ada"}', severityText: undefined, severityNumber: undefined, traceId: undefined, spanId: undefined },
      { body: 'trace id only', severityText: undefined, severityNumber: undefined, traceId: TRACE, spanId: undefined },
      { body: 'bad span', severityText: undefined, severityNumber: undefined, traceId: TRACE, spanId: undefined },
    ]);
    expect(got.every((r) => r.flags === undefined)).toBe(true);

    expect(got[0]!.typedAttributes).toEqual({
      ...OWN,
      ['__proto__']: { string: 'not a prototype' },
      path: { string: '/data' },
      free_bytes: { int: 1234 },
      negative: { int: -5 },
      ratio: { double: 0.93 },
      // JSON.parse gives 2 for 2.0: whole numbers are ints, as the OpenTelemetry SDK sends them.
      whole_double: { int: 2 },
      beyond_safe: { int: 9007199254740994n },
      beyond_int64: { string: '1e+21' },
      ok: { bool: false },
      nothing: null,
      tags: { array: [{ string: 'a' }, { int: 1 }, { double: 2.5 }, { bool: true }, null, { string: '1e+21' }] },
      ctx: { kvlist: { user: { kvlist: { id: { int: 7 }, name: { string: 'ada' } } }, list: { array: [] } } },
      'json.log.iostream': { string: 'spoofed stream' },
      'json.mls.model_id': { string: 'spoofed model' },
      'json.json.mls.model_id': { string: 'already prefixed' },
      'json.mls.record.lines': { int: 99 },
      'json.exception.type': { string: 'spoofed type' },
    });
    expect(got[1]!.typedAttributes).toEqual({
      'log.iostream': { string: 'stderr' },
      'mls.model_id': { string: 'model-a' },
      'mls.record.lines': { int: 3 },
      'mls.record.time_end': { string: '2026-11-22T10:00:00.123457000Z' },
      'exception.type': { string: 'ValueError' },
      'exception.message': { string: 'bad input' },
      'exception.stacktrace': { string: 'Traceback (most recent call last):\n  File "serve.py", line 3, in <module>\nValueError: bad input' },
      'exception.chain': { array: [{ string: 'KeyError' }, { string: 'json.decoder.JSONDecodeError' }] },
    });
    expect(got[2]!.typedAttributes).toEqual({ 'log.iostream': { string: 'stderr' }, 'mls.model_id': { string: 'model-a' } });
    expect(got[9]!.typedAttributes).toEqual({ ...OWN, user: { string: 'ada' }, trace_id: { string: '0'.repeat(32) }, span_id: { string: SPAN } });
    expect(got[10]!.typedAttributes).toEqual(OWN);
    expect(got[11]!.typedAttributes).toEqual({ ...OWN, span_id: { string: 'XYZ' } });
  });

  it('sends what it cannot encode as it is as well-formed text: lone surrogates, an infinite number, attributes nested 10,000 deep', async () => {
    let deep: Record<string, unknown> = { v: 1 };
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const aside: SinkEntry[] = [];
    const unmappable = record(4, { log: 'no time' });
    Object.defineProperty(unmappable, 'timeNs', { get: () => { throw new RangeError('no time'); } });
    const batch = {
      ...batchOf([
        record(1, { log: 'half \ud83d', message: 'cut \udc00 here', attributes: { 'k\ud800': ['v\udbff'], ratio: Infinity, low: -Infinity } }),
        record(2, { log: 'deep line', message: 'deep', attributes: deep }),
        record(3, { log: 'fine after' }),
        record(5, { log: 'Traceback (most recent call last):\nKeyError: \'half \ud83d\'', exception: { type: 'KeyError', message: "'half \ud83d'" } }),
        record(6, { log: 'Traceback (most recent call last):\nStopIteration', exception: { type: 'StopIteration' } }),
        unmappable,
      ]),
      setAside: (e: SinkEntry) => void aside.push(e),
    };
    expect(await sink.send(batch, signal)).toEqual({ status: 'ok' });
    const got = receiver.logRecords();
    expect(got.map((r) => r.body)).toEqual(['cut \ufffd here', 'deep line', 'fine after', "Traceback (most recent call last):\nKeyError: 'half \ufffd'", 'Traceback (most recent call last):\nStopIteration']);
    expect(got[0]!.typedAttributes).toEqual({ ...OWN, 'k\ufffd': { array: [{ string: 'v\ufffd' }] }, ratio: { string: 'Infinity' }, low: { string: '-Infinity' } });
    // The record that could not be mapped whole goes as its text; the one that could not be mapped at all is set aside.
    expect(got[1]!.typedAttributes).toEqual(OWN);
    expect(got[3]!.typedAttributes).toEqual({
      ...OWN,
      'exception.type': { string: 'KeyError' },
      'exception.message': { string: "'half \ufffd'" },
      'exception.stacktrace': { string: "Traceback (most recent call last):\nKeyError: 'half \ufffd'" },
    });
    // No message, no chain: neither attribute.
    expect(got[4]!.typedAttributes).toEqual({ ...OWN, 'exception.type': { string: 'StopIteration' }, 'exception.stacktrace': { string: 'Traceback (most recent call last):\nStopIteration' } });
    expect(aside).toEqual([unmappable]);
  });

  it('leaves the records it was given unchanged', async () => {
    const batch = records();
    const before = JSON.stringify(batch, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    expect(await sink.send(batchOf(batch), signal)).toEqual({ status: 'ok' });
    expect(JSON.stringify(batch, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).toBe(before);
    expect(Object.getPrototypeOf(batch[0]!.attributes)).toBe(Object.prototype);
  });
});

describe('OTLP record mapping helpers', () => {
  it('accepts only 32 / 16 lowercase hex digits, not all zeros, as trace and span ids', () => {
    expect(validTraceId(TRACE)).toBe(true);
    expect(validTraceId(TRACE.toUpperCase())).toBe(false);
    expect(validTraceId(TRACE.slice(1))).toBe(false);
    expect(validTraceId('0'.repeat(32))).toBe(false);
    expect(validTraceId(undefined)).toBe(false);
    expect(validSpanId(SPAN)).toBe(true);
    expect(validSpanId(`${SPAN}0`)).toBe(false);
    expect(validSpanId('0'.repeat(16))).toBe(false);
    expect(validSpanId('g'.repeat(16))).toBe(false);
  });

  it('turns whole numbers beyond 64 bits into strings, deep, and returns the value itself otherwise', () => {
    const plain = { a: [1, 2.5, { b: 'c' }], d: null };
    expect(anyValue(plain)).toBe(plain);
    expect(anyValue(-(2 ** 63))).toBe(-(2 ** 63));
    expect(anyValue(2 ** 63)).toBe('9223372036854776000');
    const deep = { a: [1, { b: -1e30 }], keep: 'x' };
    expect(anyValue(deep)).toEqual({ a: [1, { b: '-1e+30' }], keep: 'x' });
    expect(deep.a[1]).toEqual({ b: -1e30 });
  });
});
