import { describe, expect, it } from 'vitest';
import { ModelProcessor } from '../../src/processing/pipeline.js';
import { entryToNdjson } from '../../src/records/ndjson.js';
import { compileRedactions } from '../../src/processing/redact.js';
import { compileFilter } from '../../src/processing/filter.js';
import { compileLevelRules } from '../../src/processing/levels.js';
import type { ProcessLine } from '../../src/processing/types.js';

const T0 = Date.parse('2026-11-25T16:30:00.000Z');
let seq = 0;
function line(offsetMs: number, log: string, stream = 'stderr'): ProcessLine {
  const ms = T0 + offsetMs;
  return { seq: ++seq, timeNs: BigInt(ms) * 1_000_000n, time: new Date(ms).toISOString(), stream, log };
}

const TRACEBACK = [
  'ERROR:app:request failed',
  'Traceback (most recent call last):',
  '  File "/app/server.py", line 42, in predict',
  '    out = model(x)',
  '          ^^^^^^^^',
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB',
];

describe('ModelProcessor', () => {
  it('ships a traceback whole at the level of its heading line, levels from the text, JSON lines structured', () => {
    const p = new ModelProcessor();
    const lines = [
      line(0, 'INFO:     127.0.0.1:50312 - "POST /predict HTTP/1.1" 200 OK'),
      ...TRACEBACK.map((t, i) => line(10 + i, t)),
      line(20, '{"event": "batch done", "level": "warning", "size": 8, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}', 'stdout'),
      line(30, 'Loading checkpoint shards:  50%|█████     | 2/4 [00:03<00:03,  1.52s/it]'),
    ];
    // The page arrives shuffled; the records are in time order per stream.
    const shuffled = [lines[5]!, lines[0]!, lines[8]!, lines[2]!, lines[1]!, lines[7]!, lines[3]!, lines[6]!, lines[4]!];
    const got = [...p.push(shuffled).records, ...p.flush().records];
    expect(got.map((r) => JSON.parse(entryToNdjson({ ...r, modelId: 'm' })))).toEqual([
      { model_id: 'm', time: lines[0]!.time, stream: 'stderr', log: lines[0]!.log, level: 'info' },
      { model_id: 'm', time: lines[1]!.time, stream: 'stderr', log: TRACEBACK.join('\n'), level: 'error', lines: 6, time_end: lines[6]!.time, exception: { type: 'torch.cuda.OutOfMemoryError', message: 'CUDA out of memory. Tried to allocate 2.00 GiB' } },
      { model_id: 'm', time: lines[7]!.time, stream: 'stdout', log: lines[7]!.log, level: 'warn', message: 'batch done', attributes: { size: 8 }, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' },
      { model_id: 'm', time: lines[8]!.time, stream: 'stderr', log: lines[8]!.log },
    ]);
    expect(got.flatMap((r) => [r.firstSeq, r.lastSeq])).toEqual([lines[0]!.seq, lines[0]!.seq, lines[1]!.seq, lines[6]!.seq, lines[7]!.seq, lines[7]!.seq, lines[8]!.seq, lines[8]!.seq]);
  });

  it('holds an open traceback until the checkpoint passes it by the gap, and says which seq the cursor must not pass', () => {
    const p = new ModelProcessor({ multiline: { maxGapMs: 2000 } });
    const tb = TRACEBACK.slice(1).map((t, i) => line(i, t));
    expect(p.push(tb.slice(0, 3)).records).toEqual([]);
    expect(p.openFirstSeq()).toBe(tb[0]!.seq);
    expect(p.push(tb.slice(3)).records).toEqual([]);
    expect(p.advance(BigInt(T0 + 1_000) * 1_000_000n).records).toEqual([]);
    const closed = p.advance(BigInt(T0 + 10_000) * 1_000_000n).records;
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ lines: 5, level: 'error', levelText: 'ERROR' });
    expect(p.openFirstSeq()).toBeUndefined();
  });

  it('redacts before anything reads the text, applies user level rules first, and counts what the filter drops', () => {
    const p = new ModelProcessor({
      multiline: false,
      redact: compileRedactions([], { secretsPreset: true }),
      levelRules: compileLevelRules([{ match: '^GPU\\b', level: 'warn' }]),
      filter: compileFilter({ drop: [{ match: 'GET /health' }], minLevel: 'info' }),
    });
    const out = p.push([
      line(0, 'INFO:     10.0.0.1:1 - "GET /health HTTP/1.1" 200 OK'),
      line(1, 'DEBUG:app:cache warm'),
      line(2, 'GPU 0 at 91 C'),
      line(3, 'INFO:app:using token hf_abcdefghijklmnopqrstuvwxyz0123456789'),
      line(4, 'a plain print()'),
    ]);
    expect(out.dropped).toBe(2);
    expect(out.records.map((r) => [r.level, r.log])).toEqual([
      ['warn', 'GPU 0 at 91 C'],
      ['info', 'INFO:app:using token [REDACTED]'],
      [undefined, 'a plain print()'],
    ]);
  });

  it('redacts what is shipped: the decoded values of a JSON line, and the line then written from them', () => {
    const p = new ModelProcessor({ multiline: false, redact: compileRedactions([{ pattern: 'secret-\\d+' }]) });
    const [json, text] = p.push([line(0, '{"event": "pw secret-\\u0031\\u0032\\u0033", "user": {"token": "secret-\\u0034"}}'), line(1, 'plain secret-5')]).records;
    // Every output decoded before it is searched: the NDJSON line, then the JSON text it carries.
    const shipped = JSON.parse(entryToNdjson(json!)) as { log: string; message: string; attributes: unknown };
    expect(JSON.stringify([shipped, JSON.parse(shipped.log)])).not.toMatch(/secret-\d/);
    expect(shipped).toMatchObject({ message: 'pw [REDACTED]', attributes: { user: { token: '[REDACTED]' } } });
    expect(text!.log).toBe('plain [REDACTED]');
  });

  it('ships a line whose level cannot be read (a rule throws on it) as its text, and goes on', () => {
    const throwing = { test: () => true, exec: () => { throw new RangeError('Maximum call stack size exceeded'); } };
    const p = new ModelProcessor({ multiline: false, levelRules: [{ pattern: throwing as never, level: 'error' }] });
    const records = p.push([line(0, '{"event": "x", "n": 1}'), line(1, 'INFO: next')]).records;
    expect(records.map((r) => [r.log, r.level, r.attributes])).toEqual([
      ['{"event": "x", "n": 1}', undefined, undefined],
      ['INFO: next', undefined, undefined],
    ]);
  });
});
