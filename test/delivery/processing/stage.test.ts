// The processing stage of a sink: whatever batch boundaries and restarts (open groups
// committed with the cursor, then reopened from the journal), every line ends in exactly
// one record, and the records are those of an uninterrupted run.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ProcessingStage, type ModelProgress, type StageOptions } from '../../../src/delivery/processing/stage.js';
import type { SinkEntry } from '../../../src/records/entry.js';
import { compileRedactions } from '../../../src/processing/redact.js';
import { compileFilter } from '../../../src/processing/filter.js';
import { ModelProcessor } from '../../../src/processing/pipeline.js';
import { recordBatch } from '../../../src/delivery/batch.js';
import { entryToNdjson } from '../../../src/records/ndjson.js';
import { TestJournal, tempDir } from '../../helpers/delivery.js';
import { recordOf, type BatchRecord } from '../../../src/delivery/processing/fast-lines.js';
import { runs } from '../../helpers/long.js';

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
beforeEach(() => {
  tmp = tempDir('mls-stage-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
});
afterEach(() => {
  journal.close();
  tmp.remove();
});

const TRACEBACK = [
  '2026-11-22 10:00:00,120 - app - ERROR - inference failed',
  'Traceback (most recent call last):',
  '  File "/app/server.py", line 88, in predict',
  '    out = model(batch)',
  '          ^^^^^^^^^^^^',
  '  File "/app/model.py", line 12, in forward',
  '    return self.head(x)',
  'RuntimeError: CUDA out of memory',
];

/** The records of a build, as objects. */
const entries = (o: { records: BatchRecord[] }): SinkEntry[] => o.records.map(recordOf);

const idle: ModelProgress = { watermarkNs: () => undefined, journaledThrough: () => 0, stopped: () => false };

function stage(over: Partial<StageOptions> = {}): ProcessingStage {
  return new ProcessingStage({ sink: 's', processor: {}, raw: false, progress: idle, ...over });
}

/** Pages for two models and both streams, with tracebacks cut across pages. */
function fill(): string[] {
  const all: string[] = [];
  const add = (model: string, lines: string[], stream = 'stderr') => {
    journal.appendLines(model, lines, { stream });
    all.push(...lines.map((l) => `${model}|${stream}|${l}`));
  };
  add('a', ['INFO:     Started server process [12]', ...TRACEBACK.slice(0, 3)]);
  add('b', ['print output 1', 'print output 2'], 'stdout');
  add('a', [...TRACEBACK.slice(3), 'INFO:     127.0.0.1:5000 - "POST /predict HTTP/1.1" 500 Internal Server Error']);
  add('b', TRACEBACK.slice(0, 5));
  add('a', ['WARNING:root:slow batch', 'ERROR:app:lost a worker']);
  add('b', [...TRACEBACK.slice(5), 'after']);
  return all;
}

function lineKeys(records: SinkEntry[]): string[] {
  return records.flatMap((r) => r.log.split('\n').map((l) => `${r.modelId}|${r.stream}|${l}`));
}

/** Runs the journal through stages in batches of `size`, starting a new stage from the held groups after every `restartEvery` batches. */
function run(size: number, restartEvery: number): SinkEntry[] {
  const out: SinkEntry[] = [];
  let cursor = 0;
  let held: string | undefined;
  let s = stage();
  s.restore(held, (a, b) => journal.store.slicesOfRange(a, b));
  for (let n = 1; ; n++) {
    const slices = journal.store.slicesAfter(cursor, size);
    if (slices.length === 0) break;
    const last = slices[slices.length - 1]!;
    cursor = last.page.firstSeq + last.to - 1;
    out.push(...entries(s.build(slices, cursor)));
    held = s.held().json;
    if (n % restartEvery === 0) {
      s = stage();
      s.restore(held, (a, b) => journal.store.slicesOfRange(a, b));
    }
  }
  out.push(...entries(s.build([], cursor, undefined, true)));
  expect(s.held()).toEqual({ json: undefined, holdSeq: undefined });
  return out;
}

describe('the processing stage of a sink', () => {
  it('gives every line once and the same records, whatever the batch size and the restarts', () => {
    const input = fill();
    const reference = run(1000, 1000);
    expect(lineKeys(reference).sort()).toEqual([...input].sort());
    const tracebacks = reference.filter((r) => r.lines !== undefined);
    expect(tracebacks.map((r) => [r.modelId, r.lines, r.level])).toEqual([
      ['a', 8, 'error'],
      ['b', 8, 'error'],
    ]);
    const shape = (rs: SinkEntry[]) => rs.map((r) => [r.modelId, r.seq, r.lines ?? 1, r.level ?? null]).sort((x, y) => (x[1] as number) - (y[1] as number));
    for (const size of [1, 2, 3, 5, 7]) {
      for (const every of [1, 2, 3]) {
        const got = run(size, every);
        expect(lineKeys(got).sort(), `batches of ${size}, restart every ${every}`).toEqual([...input].sort());
        expect(shape(got), `batches of ${size}, restart every ${every}`).toEqual(shape(reference));
      }
    }
  });

  const dropPrint = compileFilter({ drop: [{ match: 'print output 1' }] });
  it.each([
    ['with redaction', { redact: compileRedactions([], { secretsPreset: true }), filter: dropPrint }, new Map([['b', 1]])],
    ['without redaction', { filter: dropPrint }, new Map([['b', 1]])],
    ['with the defaults and a level filter', { filter: compileFilter({ minLevel: 'warn' }) }, new Map([['a', 2], ['c', 2]])],
    ['with the defaults', {}, new Map()],
  ] as const)('gives the records and NDJSON of the processor fed the same lines, %s', (_name, processor, dropped) => {
    fill();
    journal.appendLines('c', [
      '{"event": "done", "level": "info", "latency_ms": 3}',
      'token hf_abcdefghijklmnopqrstuvwxyz0123456789',
      'plain ünïcode "quoted" \\ path\ttab',
      ' { not json',
      '{broken json}',
      'WARNING:root:slow',
      '',
    ]);
    journal.appendLines('c', ['INFO:     x', 'ERROR:app:no traceback follows', 'after'], { stream: 'stdout' });
    const s = stage({ processor });
    const slices = journal.store.slicesAfter(0, 1000);
    const out = s.build(slices, 1000, undefined, true);
    expect(out.records).toHaveLength(19 - [...dropped.values()].reduce((a, b) => a + b, 0));
    // The processor fed the decoded lines, page by page as the stage feeds them.
    const eager = new Map<string, ModelProcessor>();
    const expected: SinkEntry[] = [];
    for (const { page, from, to } of slices) {
      let p = eager.get(page.modelId);
      if (p === undefined) eager.set(page.modelId, (p = new ModelProcessor({ ...processor, modelId: page.modelId })));
      expected.push(...p.push(page.decode().slice(from, to)).records);
    }
    for (const p of eager.values()) expected.push(...p.flush().records);
    const batch = recordBatch('id', 1, 1000, out.records);
    expect(Buffer.concat(batch.ndjson!.map((c) => c.bytes)).toString()).toBe(expected.map(entryToNdjson).join(''));
    expect(batch.ndjson!.every((c) => c.records === true && c.timesNs.length === c.bytes.toString().split('\n').length - 1)).toBe(true);
    expect(batch.entries).toEqual(expected);
    expect(batch.entries.some((r) => r.levelText === 'WARNING')).toBe(true);
    expect(out.dropped).toEqual(dropped);
  });

  it('commits the lowest held seq, and nothing once the groups close', () => {
    journal.appendLines('a', ['ok', ...TRACEBACK.slice(0, 4)]);
    const s = stage();
    const out = s.build(journal.store.slicesAfter(0, 100), 5);
    expect(entries(out).map((r) => r.log)).toEqual(['ok']);
    expect(s.held().holdSeq).toBe(2);
    expect(s.heldLines()).toBe(4);
    journal.appendLines('a', TRACEBACK.slice(4));
    const next = s.build(journal.store.slicesAfter(5, 100), 9);
    expect(next.records.length).toBe(0);
    expect(entries(s.build([], 9, undefined, true)).map((r) => r.lines)).toEqual([8]);
    expect(s.held().json).toBeUndefined();
  });

  it('closes a group when the checkpoint passes it by the gap, only once the sink has read through the model, and records the close', () => {
    journal.appendLines('a', TRACEBACK.slice(0, 4));
    let watermark = 0n;
    let journaled = 4;
    const s = stage({ progress: { watermarkNs: () => watermark, journaledThrough: () => journaled, stopped: () => false } });
    const slices = journal.store.slicesAfter(0, 100);
    const lastNs = slices[0]!.page.timesNs[3]!;
    expect(s.build(slices, 4).closes).toEqual([]);
    watermark = lastNs + 2_000_000_001n;
    journaled = 5; // a line of the model not read yet: the checkpoint says nothing
    expect(s.build([], 4).records.length).toBe(0);
    journaled = 4;
    const out = s.build([], 4);
    expect(entries(out).map((r) => r.lines)).toEqual([4]);
    expect(out.closes).toEqual([['a', watermark.toString()]]);
    // rebuilt from what was recorded: the same records
    const again = stage();
    again.restore(undefined, () => []);
    again.build(journal.store.slicesAfter(0, 100), 4, []);
    expect(entries(again.build([], 4, out.closes))).toEqual(entries(out));
  });

  it('closes the groups of a model that stopped', () => {
    journal.appendLines('a', TRACEBACK.slice(0, 3));
    let stopped = false;
    const s = stage({ progress: { ...idle, stopped: () => stopped } });
    s.build(journal.store.slicesAfter(0, 100), 3);
    stopped = true;
    const out = s.build([], 3);
    expect(out.closes).toEqual([['a', null]]);
    expect(entries(out).map((r) => r.lines)).toEqual([3]);
  });

  it('groups a late traceback of a re-read among its own lines, leaving the open group alone', () => {
    journal.appendLines('a', ['first', 'ERROR:app:held'], { atMs: 10_000 });
    journal.appendLines('a', TRACEBACK, { atMs: 5_000 }); // older than what was read: a late page
    const s = stage();
    const out = s.build(journal.store.slicesAfter(0, 100), 10);
    expect(entries(out).map((r) => [r.log.split('\n')[0], r.lines ?? 1])).toEqual([
      ['first', 1],
      [TRACEBACK[0], 8],
    ]);
    expect(s.heldLines()).toBe(1);
  });

  it('in raw mode gives one record per entry, redacted, and holds nothing', () => {
    journal.appendLines('a', ['token hf_abcdefghijklmnopqrstuvwxyz0123456789', ...TRACEBACK]);
    const s = stage({ raw: true, processor: { redact: compileRedactions([], { secretsPreset: true }), multiline: false } });
    const out = s.build(journal.store.slicesAfter(0, 100), 9);
    expect(out.records).toHaveLength(9);
    expect(entries(out)[0]!.log).toBe('token [REDACTED]');
    expect(entries(out).every((r) => r.level === undefined && r.lines === undefined)).toBe(true);
    expect(s.held().json).toBeUndefined();
  });

  it('counts each record once for the model it meters, before the filter, and the records the filter drops', () => {
    journal.appendLines('a', ['INFO:     ok', 'WARNING:root:slow', 'plain', ...TRACEBACK, 'after', ...TRACEBACK.slice(1), 'done']);
    journal.appendLines('b', TRACEBACK);
    const counted: Array<string | undefined> = [];
    const exceptions: string[] = [];
    const s = stage({
      processor: { filter: (r) => (r.level === 'info' || r.level === 'error' ? { drop: 'level' } : 'keep') },
      meter: {
        counts: (sink, model) => sink === 's' && model === 'a',
        record: (_m, level, n) => void counted.push(`${level}×${n}`),
        exception: (m, type, n) => void exceptions.push(`${m} ${type}×${n}`),
      },
    });
    const out = s.build(journal.store.slicesAfter(0, 100), 100, undefined, true);
    expect(entries(out).filter((r) => r.modelId === 'a').map((r) => r.log)).toEqual(['WARNING:root:slow', 'plain', 'after', 'done']);
    expect(out.dropped).toEqual(new Map([['a', 3], ['b', 1]]));
    expect(counted.sort()).toEqual(['error×2', 'info×1', 'undefined×3', 'warn×1']);
    expect(exceptions).toEqual(['a RuntimeError×2']);
    // Counted once: the next build of the model counts only its own records.
    const through = journal.store.lastSeq();
    journal.appendLines('a', ['INFO:     later']);
    s.build(journal.store.slicesAfter(through, 100), through + 1);
    expect(counted.sort()).toEqual(['error×2', 'info×1', 'info×1', 'undefined×3', 'warn×1']);
    expect(exceptions).toEqual(['a RuntimeError×2']);
  });

  it('gives what the processor fed the lines as objects gives, for any lines and pages (property)', () => {
    const line = fc.constantFrom(
      ...TRACEBACK, 'INFO:     ok', 'DEBUG batch 1', 'WARNING: GPU', 'ERROR [worker-1] reset', 'request body={"a":"\\"x\\""}', 'print ü',
      '{"event": "e", "level": "warn"}', '{broken}', '', '  indented', 'level=error x', 'a.py:1: UserWarning: w', '-- rule', 'Traceback',
      'ERROR: lost a worker', 'CRITICAL: shutting down', 'FATAL boom', 'EXCEPTION: x', 'ERR: no heading', 'ERRORS: no heading',
    );
    // Streams per line or per page: a logging line held until its stream's next line, with the other stream's lines between.
    const page = fc.record({
      model: fc.constantFrom('a', 'b'),
      stream: fc.constantFrom('stdout', 'stderr'),
      lines: fc.array(line, { minLength: 1, maxLength: 12 }),
      streams: fc.option(fc.array(fc.constantFrom('stdout', 'stderr'), { minLength: 12, maxLength: 12 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(page, { minLength: 1, maxLength: 6 }), fc.boolean(), (pages, levelFilter) => {
        const j = new TestJournal(join(tmp.dir, `p-${Math.random().toString(36).slice(2)}.db`));
        try {
          for (const p of pages) j.appendLines(p.model, p.lines, { stream: p.stream, ...(p.streams ? { streams: p.streams } : {}) });
          const processor = levelFilter ? { filter: compileFilter({ minLevel: 'info' }) } : {};
          const slices = j.store.slicesAfter(0, 1000);
          const out = stage({ processor }).build(slices, 1000, undefined, true);
          const eager = new Map<string, ModelProcessor>();
          const expected: SinkEntry[] = [];
          for (const { page: pg, from, to } of slices) {
            let p = eager.get(pg.modelId);
            if (p === undefined) eager.set(pg.modelId, (p = new ModelProcessor({ ...processor, modelId: pg.modelId })));
            expected.push(...p.push(pg.decode().slice(from, to)).records);
          }
          for (const p of eager.values()) expected.push(...p.flush().records);
          // Per model: the order of two models' groups closed at the end is not the processor's.
          const batch = recordBatch('id', 1, 1000, out.records);
          const lines = Buffer.concat(batch.ndjson!.map((c) => c.bytes)).toString().split('\n').slice(0, -1);
          for (const model of ['a', 'b']) {
            const mine = expected.filter((r) => r.modelId === model);
            expect(lines.filter((l) => l.startsWith(`{"model_id":"${model}"`))).toEqual(mine.map((r) => entryToNdjson(r).slice(0, -1)));
            expect(batch.entries.filter((r) => r.modelId === model)).toEqual(mine);
          }
        } finally {
          j.close();
        }
      }),
      { numRuns: runs(150) },
    );
  });
});
