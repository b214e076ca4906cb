// The fast path of processing is held to the plain one: a line decided on its bytes is what
// the text path makes of it, and a sink's stage with the fast path gives the records, the
// NDJSON, the drop counts and the open groups the plain path gives, for any journal.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FastLine, fastLevel, recordOf } from '../../../src/delivery/processing/fast-lines.js';
import { ProcessingStage, type ModelProgress } from '../../../src/delivery/processing/stage.js';
import { sinkProcessing } from '../../../src/delivery/processing/compile.js';
import { processingSchema } from '../../../src/config/processing.js';
import { recordBatch } from '../../../src/delivery/batch.js';
import { compileFilter } from '../../../src/processing/filter.js';
import { detectLevel } from '../../../src/processing/levels.js';
import { mayBeJsonObject } from '../../../src/processing/json-line.js';
import { defaultHeadsBlock, pythonOpens } from '../../../src/processing/multiline-python.js';
import { TestJournal, tempDir } from '../../helpers/delivery.js';
import { runs } from '../../helpers/long.js';

/** The line's text as the journal holds it: JSON-escaped UTF-8, without the quotes. */
function journalForm(log: string): Buffer {
  return Buffer.from(JSON.stringify(log).slice(1, -1));
}

const STARTS = [
  'INFO', 'INFO:', 'INFO ', 'INFO\t', 'INFO\u00a0', 'DEBUG', 'DEBUG:', 'WARNING:root:', 'WARN ', 'WARNINGS ', 'TRACE ', 'NOTICE:', 'SUCCESS ', 'PANIC: ',
  'ERROR:', 'ERR ', 'CRITICAL ', 'FATAL ', 'EXCEPTION ', 'Traceback (most recent call last):', 'TRACEBACK ', '+ Exception', 'I1125 16:30:01 x', 'W1125 ',
  '(VllmWorker rank=0 pid=1) INFO x', '[rank0]: INFO', '[ERROR] x', '2026-11-25 16:30:01,123 - app - ERROR - x', 'level=warn ', 'x.py:1: FutureWarning: ',
  'INFO {"level": "error"}', '{"level": "info"}', ' INFO x', 'INF', 'Info ', 'info ', 'ü', '', '"quoted"', '\\path', 'WARN\\n', 'DEBUG\n',
];

describe('fastLevel', () => {
  it('is undefined, or the level of a line that is no JSON object and opens no python block', () => {
    fc.assert(
      fc.property(fc.constantFrom(...STARTS), fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom(...STARTS), (a, b, c) => {
        for (const log of [a + b, a + c, a, b + a]) {
          const bytes = journalForm(log);
          // Alone, and inside a longer buffer as in a page.
          const padded = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('"}\n')]);
          for (const [buf, from] of [[bytes, 0], [padded, 2]] as const) {
            const level = fastLevel(buf, from, from + bytes.length);
            if (level === undefined) continue;
            expect(detectLevel(log)?.level, JSON.stringify(log)).toBe(level);
            expect(mayBeJsonObject(log), JSON.stringify(log)).toBe(false);
            expect(pythonOpens(log, defaultHeadsBlock), JSON.stringify(log)).toBeUndefined();
          }
        }
      }),
      { numRuns: runs(2000) },
    );
  });

  it('decides the usual lines, and leaves the ones that may head a traceback to the text', () => {
    const level = (log: string) => fastLevel(journalForm(log), 0, journalForm(log).length);
    expect(level('INFO [worker-1] POST /predict 200')).toBe('info');
    expect(level('INFO:     127.0.0.1 - "GET /"')).toBe('info');
    expect(level('DEBUG batch 1')).toBe('debug');
    expect(level('WARNING: GPU memory at 88%')).toBe('warn');
    expect(level('ERROR [worker-3] CUDA out of memory')).toBeUndefined();
    expect(level('CRITICAL:root:down')).toBeUndefined();
    expect(level('print output')).toBeUndefined();
  });
});

describe('sinkProcessing', () => {
  it('takes the fast path with the built-in rules, nothing redacted and a filter of levels only', () => {
    const fast = (processing: object, sink: object = {}) => sinkProcessing(processingSchema.parse(processing), { raw: false, ...sink })!.fast;
    expect(fast({})).toBe(true);
    expect(fast({ multiline: 'off', min_level: 'info' })).toBe(true);
    expect(fast({}, { min_level: 'warn' })).toBe(true);
    expect(fast({ redact: { secrets: true } })).toBe(false);
    expect(fast({ redact: { rules: [{ pattern: 'x' }] } })).toBe(false);
    expect(fast({ levels: { rules: [{ match: 'x', level: 'info' }] } })).toBe(false);
    expect(fast({ drop: [{ match: 'x' }] })).toBe(false);
    expect(fast({}, { drop: [{ match: 'x' }] })).toBe(false);
    expect(fast({ multiline: { rule: { start: 'x', continue: 'y' } } })).toBe(false);
  });
});

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('mls-fast-');
});
afterEach(() => tmp.remove());

const TRACEBACK = ['ERROR:app:failed', 'Traceback (most recent call last):', '  File "/app/x.py", line 1, in f', '    g()', 'ValueError: bad', ''];
const LINES = [...TRACEBACK, 'INFO:     ok', 'INFO [worker-1] POST /predict 200', 'DEBUG batch 1', 'WARNING: GPU', 'WARN\tx', 'NOTICE: n', 'PANIC: p', 'ERROR [worker-2] reset', 'CRITICAL: down', '{"event": "e", "level": "warn"}', 'print ü', 'INFO {"a": 1}', 'INFO "quoted" \\ path', '推理完成 ✓'];

describe('a stage with the fast path', () => {
  const idle: ModelProgress = { watermarkNs: () => undefined, journaledThrough: () => 0, stopped: () => false };

  it('keeps the usual lines as their journal lines, and gives the rest to the plain path', () => {
    const j = new TestJournal(join(tmp.dir, 'state.db'));
    try {
      j.appendLines('a', ['INFO x', 'ERROR:app:failed', 'Traceback (most recent call last):', 'DEBUG y', 'WARNING: z', '{"level": "info"}'], { streams: ['stdout', 'stderr', 'stderr', 'stdout', 'stdout', 'stdout'] });
      const out = new ProcessingStage({ sink: 's', processor: {}, raw: false, fast: true, progress: idle }).build(j.store.slicesAfter(0, 100), 6, undefined, true);
      expect(out.records.map((r) => (r instanceof FastLine ? r.level : recordOf(r).log))).toEqual(['info', 'debug', 'warn', '{"level": "info"}', 'ERROR:app:failed\nTraceback (most recent call last):']);
      const ndjson = recordBatch('id', 1, 6, out.records).ndjson!.map((c) => c.bytes.toString()).join('');
      expect(ndjson.split('\n')[0]).toBe(`{"model_id":"a","time":"${recordOf(out.records[0]!).time}","stream":"stdout","log":"INFO x","level":"info"}`);
    } finally {
      j.close();
    }
  });

  it('gives the records, NDJSON, drop counts and open groups of the plain path, for any journal (property)', () => {
    const page = fc.record({
      model: fc.constantFrom('a', 'b'),
      lines: fc.array(fc.constantFrom(...LINES), { minLength: 1, maxLength: 12 }),
      streams: fc.array(fc.constantFrom('stdout', 'stderr', 'other'), { minLength: 12, maxLength: 12 }),
      // Some pages are late: older than what was read before them.
      backMs: fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(page, { minLength: 1, maxLength: 6 }), fc.boolean(), fc.integer({ min: 1, max: 40 }), (pages, levelFilter, batchSize) => {
        const j = new TestJournal(join(tmp.dir, `p-${Math.random().toString(36).slice(2)}.db`));
        try {
          let atMs = 100_000;
          for (const p of pages) {
            atMs += 1_000;
            j.appendLines(p.model, p.lines, { streams: p.streams, atMs: atMs - (p.backMs ?? 0) });
          }
          const processor = levelFilter ? { filter: compileFilter({ minLevel: 'info' }) } : {};
          const run = (fast: boolean) => {
            const stage = new ProcessingStage({ sink: 's', processor, raw: false, fast, progress: idle });
            const out: { records: unknown[]; ndjson: string; dropped: [string, number][]; held: unknown[] } = { records: [], ndjson: '', dropped: [], held: [] };
            for (let cursor = 0; ; ) {
              const slices = j.store.slicesAfter(cursor, batchSize);
              const last = slices[slices.length - 1];
              const through = last === undefined ? cursor : last.page.firstSeq + last.to - 1;
              const built = stage.build(slices, through, undefined, last === undefined);
              const batch = recordBatch('id', cursor + 1, through, built.records);
              out.records.push(...built.records.map(recordOf));
              out.ndjson += batch.ndjson!.map((c) => c.bytes.toString()).join('');
              out.dropped.push(...built.dropped);
              out.held.push(stage.held());
              if (last === undefined) return out;
              cursor = through;
            }
          };
          expect(run(true)).toEqual(run(false));
        } finally {
          j.close();
        }
      }),
      { numRuns: runs(150) },
    );
  });
});
