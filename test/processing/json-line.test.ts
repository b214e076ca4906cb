//! JSON log lines: the shapes Python model servers write, and lines that only look like JSON.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, mayBeJsonObject, parseJsonLine, redactJson, type JsonLine } from '../../src/processing/json-line.js';
import { compileRedactions } from '../../src/processing/redact.js';
import { runs } from '../helpers/long.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

const corpus: Array<[string, string, JsonLine]> = [
  [
    'structlog',
    '{"event": "model loaded", "level": "info", "timestamp": "2026-03-02T10:15:00.123456Z", "logger": "vllm.engine", "model": "llama-3-8b"}',
    {
      message: 'model loaded',
      attributes: { timestamp: '2026-03-02T10:15:00.123456Z', logger: 'vllm.engine', model: 'llama-3-8b' },
      levelField: { key: 'level', value: 'info' },
      timeField: { key: 'timestamp', value: '2026-03-02T10:15:00.123456Z' },
    },
  ],
  [
    'python-json-logger with exc_info',
    '{"asctime": "2026-03-02 10:15:01,042", "levelname": "ERROR", "name": "app.inference", "message": "generation failed", "exc_info": "Traceback (most recent call last):\\n  File \\"/app/server.py\\", line 88, in generate\\n    out = model(**batch)\\nRuntimeError: CUDA out of memory"}',
    {
      message: 'generation failed',
      attributes: {
        asctime: '2026-03-02 10:15:01,042',
        name: 'app.inference',
        exc_info: 'Traceback (most recent call last):\n  File "/app/server.py", line 88, in generate\n    out = model(**batch)\nRuntimeError: CUDA out of memory',
      },
      levelField: { key: 'levelname', value: 'ERROR' },
      timeField: { key: 'asctime', value: '2026-03-02 10:15:01,042' },
    },
  ],
  [
    'OTel logging instrumentation ids (uppercase hex lowered)',
    `{"msg": "request done", "lvl": "INFO", "otelTraceID": "${TRACE.toUpperCase()}", "otelSpanID": "${SPAN}", "otelServiceName": "embedder", "otelTraceSampled": true}`,
    {
      message: 'request done',
      attributes: { otelServiceName: 'embedder', otelTraceSampled: true },
      levelField: { key: 'lvl', value: 'INFO' },
      traceId: TRACE,
      spanId: SPAN,
    },
  ],
  [
    'snake_case ids with a numeric severity',
    `{"message": "tokens=512 latency_ms=83.4", "severity": 20, "trace_id": "${TRACE}", "span_id": "${SPAN}"}`,
    { message: 'tokens=512 latency_ms=83.4', attributes: {}, levelField: { key: 'severity', value: 20 }, traceId: TRACE, spanId: SPAN },
  ],
  [
    'all-zero and short ids stay attributes',
    '{"msg": "x", "traceId": "00000000000000000000000000000000", "spanId": "abc"}',
    { message: 'x', attributes: { traceId: '00000000000000000000000000000000', spanId: 'abc' } },
  ],
  [
    'Datadog decimal ids, flat keys',
    '{"message": "served", "dd.trace_id": "1234567890123456789", "dd.span_id": "1311768467463790320", "dd.service": "tgi"}',
    {
      message: 'served',
      attributes: { 'dd.service': 'tgi' },
      traceId: '0000000000000000112210f47de98115',
      spanId: '123456789abcdef0',
    },
  ],
  [
    'Datadog decimal ids nested under dd (an emptied dd is removed)',
    '{"message": "served", "dd": {"trace_id": 255, "span_id": "1000000000000000"}}',
    { message: 'served', attributes: {}, traceId: '000000000000000000000000000000ff', spanId: '00038d7ea4c68000' },
  ],
  [
    'a decimal id above 64 bits stays an attribute',
    '{"message": "m", "dd.trace_id": "99999999999999999999"}',
    { message: 'm', attributes: { 'dd.trace_id': '99999999999999999999' } },
  ],
  [
    'loguru serialize=True',
    '{"text": "2026-03-02 10:15:02.512 | WARNING  | __main__:warmup:41 - slow warmup\\n", "record": {"elapsed": {"repr": "0:00:03.2", "seconds": 3.2}, "exception": null, "extra": {"trace_id": "' + TRACE + '", "request": "r-17"}, "function": "warmup", "level": {"icon": "⚠️", "name": "WARNING", "no": 30}, "line": 41, "message": "slow warmup", "name": "__main__", "time": {"repr": "2026-03-02 10:15:02.512+00:00", "timestamp": 1772446502.512}}}',
    {
      message: 'slow warmup',
      attributes: {
        elapsed: { repr: '0:00:03.2', seconds: 3.2 },
        exception: null,
        extra: { request: 'r-17' },
        function: 'warmup',
        line: 41,
        name: '__main__',
        time: { repr: '2026-03-02 10:15:02.512+00:00', timestamp: 1772446502.512 },
      },
      levelField: { key: 'record.level.name', value: 'WARNING' },
      timeField: { key: 'record.time', value: { repr: '2026-03-02 10:15:02.512+00:00', timestamp: 1772446502.512 } },
      traceId: TRACE,
    },
  ],
  [
    'message keys: the first string wins, a non-string one stays',
    '{"message": {"nested": true}, "msg": "from msg", "event": "from event"}',
    { message: 'from msg', attributes: { message: { nested: true }, event: 'from event' } },
  ],
  [
    'no message at all, surrounded by whitespace',
    '  \t{"status": 200, "path": "/v1/completions", "tags": ["a", "b"]}\r\n',
    { message: undefined, attributes: { status: 200, path: '/v1/completions', tags: ['a', 'b'] } },
  ],
  [
    'only the first level key is lifted; time kept in attributes',
    '{"level": 30, "levelname": "INFO", "time": 1772446502512, "msg": "pino-style"}',
    { message: 'pino-style', attributes: { levelname: 'INFO', time: 1772446502512 }, levelField: { key: 'level', value: 30 }, timeField: { key: 'time', value: 1772446502512 } },
  ],
  [
    'deeply nested objects are kept as objects',
    '{"event": "cfg", "config": {"model": {"dtype": "bfloat16", "rope": {"type": "linear", "factor": 2.0}}, "tp": 2}}',
    { message: 'cfg', attributes: { config: { model: { dtype: 'bfloat16', rope: { type: 'linear', factor: 2 } }, tp: 2 } } },
  ],
  [
    'a __proto__ key is an ordinary attribute',
    '{"msg": "p", "__proto__": {"polluted": 1}}',
    { message: 'p', attributes: JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown> },
  ],
  [
    'ECS nested trace.id and span.id',
    `{"message": "ecs", "log.level": "info", "trace": {"id": "${TRACE}"}, "span": {"id": "${SPAN}", "name": "gen"}}`,
    { message: 'ecs', attributes: { 'log.level': 'info', span: { name: 'gen' } }, traceId: TRACE, spanId: SPAN },
  ],
];

const notObjects: Array<[string, string]> = [
  ['plain uvicorn access line', 'INFO:     10.0.0.7:51234 - "POST /generate HTTP/1.1" 200 OK'],
  ['array', '[{"msg": "a"}]'],
  ['string', '"just a string"'],
  ['number', '42'],
  ['null', 'null'],
  ['empty', ''],
  ['truncated object', '{"event": "loading shards", "progress": 0.4'],
  ['object followed by text', '{"a": 1} and more'],
  ['python dict repr', "{'event': 'not json', 'level': 'info'}"],
  ['braces in prose', '{} loaded {}'],
];

describe('parseJsonLine', () => {
  it.each(corpus)('%s', (_name, line, expected) => {
    expect(parseJsonLine(line)).toEqual(expected);
  });

  it.each(notObjects)('gives undefined for a %s', (_name, line) => {
    expect(parseJsonLine(line)).toBeUndefined();
  });

  it('keeps an own __proto__ key without changing the prototype', () => {
    const parsed = parseJsonLine('{"msg": "p", "__proto__": {"polluted": 1}}');
    expect(Object.hasOwn(parsed!.attributes, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(parsed!.attributes)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('parses a huge line (1 MB) with 2000 fields', () => {
    const obj: Record<string, string> = { message: 'big' };
    for (let i = 0; i < 2000; i++) obj[`k${i}`] = 'v'.repeat(500);
    const parsed = parseJsonLine(JSON.stringify(obj));
    expect(parsed?.message).toBe('big');
    expect(Object.keys(parsed!.attributes)).toHaveLength(2000);
  });

  it('gives undefined instead of throwing on nesting too deep to parse', () => {
    const deep = '{"a":'.repeat(200_000) + '1' + '}'.repeat(200_000);
    expect(() => parseJsonLine(deep)).not.toThrow();
  });

  it('is the same for the same line (each call gets its own objects)', () => {
    const line = corpus[0]![1];
    const a = parseJsonLine(line)!;
    a.attributes.logger = 'changed';
    expect(parseJsonLine(line)).toEqual(corpus[0]![2]);
  });

  it('never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json().map((j) => ` ${j} `), fc.string().map((s) => `{${s}}`)), (s) => {
        const r = parseJsonLine(s);
        expect(r === undefined || typeof r.attributes === 'object').toBe(true);
      }),
      { numRuns: runs(2000) },
    );
  });

  it('returns every JSON object it is given, with its message', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), (obj, msg) => {
        const r = parseJsonLine(JSON.stringify({ ...obj, message: msg }));
        expect(r?.message).toBe(msg);
      }),
      { numRuns: runs(500) },
    );
  });
});

describe('mayBeJsonObject', () => {
  it('is whether the trimmed line starts with { and ends with }, for any line', () => {
    const ends = fc.constantFrom('', '{', '}', ' ', '\t', '\u00a0', '\ufeff', '\u2028', 'x', '"', '\n');
    fc.assert(
      fc.property(ends, fc.string({ unit: 'binary', maxLength: 6 }), ends, ends, (a, middle, b, c) => {
        for (const line of [a + middle + b, a + c + middle + b + c, a + b, a]) {
          const t = line.trim();
          expect(mayBeJsonObject(line), JSON.stringify(line)).toBe(t.length >= 2 && t.startsWith('{') && t.endsWith('}'));
        }
      }),
      { numRuns: runs(2000) },
    );
  });
});

describe('hostile JSON lines', () => {
  const nested = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

  it('leaves a line nested deeper than 64 as text (every encoder downstream recurses), and reads one 64 deep', () => {
    expect(parseJsonLine(nested(10_000))).toBeUndefined();
    expect(parseJsonLine(nested(MAX_JSON_DEPTH + 1))).toBeUndefined();
    expect(parseJsonLine(`{"a": [${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}]}`)).toBeUndefined();
    const deepest = parseJsonLine(nested(MAX_JSON_DEPTH));
    expect(deepest?.attributes).toHaveProperty('a');
    expect(() => JSON.stringify(deepest)).not.toThrow();
  });
});

describe('redaction of the decoded values', () => {
  const redact = compileRedactions([{ pattern: 'secret-\\d+' }]);

  it('applies the rules to every string once decoded: the message, nested values, array items and keys', () => {
    const line = '{"event": "pw secret-\\u0031\\u0032\\u0033", "ctx": {"deep": ["x", "secret-\\u0034"]}, "secret-\\u0035": 1, "n": 2, "level": "info"}';
    const json = parseJsonLine(line, redact)!;
    expect(json.message).toBe('pw [REDACTED]');
    expect(json.attributes).toEqual({ ctx: { deep: ['x', '[REDACTED]'] }, '[REDACTED]': 1, n: 2 });
    // What is shipped as the line's text is the redacted object, not the escaped original.
    expect(json.redactedText).toBeDefined();
    expect(JSON.stringify(JSON.parse(json.redactedText!))).not.toMatch(/secret-\d/);
    expect(JSON.parse(json.redactedText!)).toMatchObject({ event: 'pw [REDACTED]', level: 'info' });
  });

  it('leaves a line nothing matched as it was written, and a `__proto__` key an ordinary field', () => {
    const line = '{"event": "fine",  "n": 1}';
    expect(parseJsonLine(line, redact)).toMatchObject({ message: 'fine', attributes: { n: 1 } });
    expect(parseJsonLine(line, redact)?.redactedText).toBeUndefined();
    const proto = redactJson(JSON.parse('{"__proto__": {"k": "secret-1"}}'), redact) as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value).toEqual({ k: '[REDACTED]' });
  });
});
