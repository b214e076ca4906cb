//! Multiline grouping over a corpus of realistic Python output, and the closing rules one by one:
//! next line, gap (by push and by advance), caps, streams, late lines, custom rules, options.
import { describe, expect, it } from 'vitest';
import { MultilineGrouper } from '../../src/processing/multiline.js';
import type { GroupedRecord } from '../../src/processing/grouped-record.js';
import type { MultilineOptions } from '../../src/processing/multiline-options.js';
import { defaultHeadsBlock } from '../../src/processing/multiline-python.js';
import type { ProcessLine } from '../../src/processing/types.js';
import { CORPUS } from './multiline-corpus.js';

const T0 = 1_772_366_400_000_000_000n; // 2026-03-01T12:00:00Z
const MS = 1_000_000n;

function line(seq: number, log: string, opts: { atMs?: number; stream?: string } = {}): ProcessLine {
  const timeNs = T0 + BigInt(opts.atMs ?? seq) * MS;
  return { seq, timeNs, time: `t${timeNs}`, stream: opts.stream ?? 'stderr', log };
}

/** Pushes the texts one millisecond apart, then flushes; all records in the order they closed. */
function group(texts: string[], options?: MultilineOptions): GroupedRecord[] {
  const g = new MultilineGrouper(options);
  const out = texts.flatMap((text, i) => g.push(line(i + 1, text)));
  return [...out, ...g.flush()];
}

describe('the corpus', () => {
  it('has enough realistic cases', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(10);
  });

  it.each(CORPUS.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const records = group(c.lines);
    let at = 0;
    const expected = c.records.map(([kind, closedBy, count]) => {
      const lines = c.lines.slice(at, at + count);
      const first = at + 1;
      at += count;
      return { kind, closedBy, lineCount: count, log: lines.join('\n'), firstSeq: first, lastSeq: at };
    });
    expect(at).toBe(c.lines.length);
    expect(records.map((r) => ({ kind: r.kind, closedBy: r.closedBy, lineCount: r.lineCount, log: r.log, firstSeq: r.firstSeq, lastSeq: r.lastSeq }))).toEqual(expected);
  });
});

describe('MultilineGrouper', () => {
  it('fills the record from its lines: times, stream, seqs', () => {
    const g = new MultilineGrouper();
    expect(g.push(line(7, 'Traceback (most recent call last):', { atMs: 10 }))).toEqual([]);
    expect(g.push(line(9, 'KeyboardInterrupt', { atMs: 12 }))).toEqual([]);
    const [r] = g.push(line(10, 'INFO:     Shutting down', { atMs: 13 }));
    expect(r).toEqual({
      lines: [line(7, 'Traceback (most recent call last):', { atMs: 10 }), line(9, 'KeyboardInterrupt', { atMs: 12 })],
      firstSeq: 7, lastSeq: 9, time: `t${T0 + 10n * MS}`, timeNs: T0 + 10n * MS, timeEnd: `t${T0 + 12n * MS}`,
      stream: 'stderr', log: 'Traceback (most recent call last):\nKeyboardInterrupt', lineCount: 2, kind: 'traceback', closedBy: 'next_line',
    });
  });

  it('returns a plain line at once without holding it', () => {
    const g = new MultilineGrouper();
    expect(g.push(line(1, 'INFO:app:loaded model'))).toMatchObject([{ kind: 'single', closedBy: 'next_line', log: 'INFO:app:loaded model' }]);
    expect(g.held()).toEqual({ lines: 0, bytes: 0 });
    expect(g.openFirstSeq()).toBeUndefined();
  });

  it('holds an ERROR line until the next line shows whether a traceback follows', () => {
    const g = new MultilineGrouper();
    expect(g.push(line(4, 'ERROR:app:request failed'))).toEqual([]);
    expect(g.held()).toEqual({ lines: 1, bytes: 24 });
    expect(g.openFirstSeq()).toBe(4);
  });

  it('closes by gap when the next line comes more than maxGapMs later', () => {
    const g = new MultilineGrouper({ maxGapMs: 2000 });
    g.push(line(1, 'ERROR:app:request failed', { atMs: 0 }));
    const out = g.push(line(2, 'Traceback (most recent call last):', { atMs: 2001 }));
    expect(out).toMatchObject([{ kind: 'single', closedBy: 'gap', firstSeq: 1 }]);
    expect(g.push(line(3, 'ValueError: x', { atMs: 4001 }))).toEqual([]);
    expect(g.flush()).toMatchObject([{ kind: 'traceback', closedBy: 'flush', firstSeq: 2, lastSeq: 3 }]);
  });

  it('keeps a line exactly maxGapMs later in the group', () => {
    const g = new MultilineGrouper({ maxGapMs: 2000 });
    g.push(line(1, 'ERROR:app:request failed', { atMs: 0 }));
    expect(g.push(line(2, 'Traceback (most recent call last):', { atMs: 2000 }))).toEqual([]);
    expect(g.flush()).toMatchObject([{ kind: 'traceback', lineCount: 2 }]);
  });

  it('closes by advance only once the watermark passes the last line by more than maxGapMs', () => {
    const g = new MultilineGrouper({ maxGapMs: 500 });
    g.push(line(1, 'Traceback (most recent call last):', { atMs: 100 }));
    g.push(line(2, 'ValueError: x', { atMs: 200 }));
    expect(g.advance(T0 + 700n * MS)).toEqual([]);
    expect(g.advance(T0 + 701n * MS)).toMatchObject([{ closedBy: 'gap', lineCount: 2 }]);
    expect(g.held()).toEqual({ lines: 0, bytes: 0 });
    expect(g.flush()).toEqual([]);
  });

  it('closes by advance and flush in time order across streams', () => {
    const g = new MultilineGrouper();
    g.push(line(5, 'ERROR:app:late one', { atMs: 50, stream: 'stdout' }));
    g.push(line(6, 'Traceback (most recent call last):', { atMs: 10, stream: 'stderr' }));
    expect(g.flush().map((r) => r.firstSeq)).toEqual([6, 5]);
  });

  it('never lets a line of another stream join or close a group', () => {
    const g = new MultilineGrouper();
    const out: GroupedRecord[] = [];
    out.push(...g.push(line(1, 'Traceback (most recent call last):', { stream: 'stderr' })));
    out.push(...g.push(line(2, '  File "/app/a.py", line 1, in <module>', { stream: 'stderr' })));
    out.push(...g.push(line(3, 'INFO:     10.0.0.1:1 - "GET /health HTTP/1.1" 200 OK', { stream: 'stdout' })));
    out.push(...g.push(line(4, '    boom()', { stream: 'stdout' })));
    out.push(...g.push(line(5, '    boom()', { stream: 'stderr' })));
    out.push(...g.push(line(6, 'NameError: name \'boom\' is not defined', { stream: 'stderr' })));
    out.push(...g.flush());
    expect(out.map((r) => [r.stream, r.lines.map((l) => l.seq)])).toEqual([
      ['stdout', [3]],
      ['stdout', [4]],
      ['stderr', [1, 2, 5, 6]],
    ]);
  });

  it('makes a line older than its stream\'s last line a record of its own, leaving the open group alone', () => {
    const g = new MultilineGrouper();
    g.push(line(10, 'Traceback (most recent call last):', { atMs: 100 }));
    expect(g.push(line(3, '  File "/app/a.py", line 1, in <module>', { atMs: 50 }))).toMatchObject([{ kind: 'single', firstSeq: 3 }]);
    g.push(line(11, 'ValueError: x', { atMs: 101 }));
    expect(g.flush()).toMatchObject([{ kind: 'traceback', lines: [{ seq: 10 }, { seq: 11 }] }]);
  });

  it('reports the lowest held seq even when seqs are not in time order', () => {
    const g = new MultilineGrouper();
    g.push(line(20, 'Traceback (most recent call last):', { atMs: 1, stream: 'stderr' }));
    g.push(line(12, '  File "/app/a.py", line 1, in <module>', { atMs: 2, stream: 'stderr' }));
    g.push(line(15, 'ERROR:app:x', { atMs: 3, stream: 'stdout' }));
    expect(g.openFirstSeq()).toBe(12);
    expect(g.held().lines).toBe(3);
  });

  it('splits at maxLines, the rest of the traceback going on as a group of its own', () => {
    const frames = Array.from({ length: 5 }, (_, i) => `  File "/app/r.py", line ${i + 1}, in f`);
    const records = group(['Traceback (most recent call last):', ...frames, 'RecursionError: maximum recursion depth exceeded', 'INFO:app:x'], { maxLines: 3 });
    expect(records.map((r) => [r.kind, r.closedBy, r.lineCount])).toEqual([
      ['traceback', 'max_lines', 3],
      ['traceback', 'max_lines', 3],
      ['traceback', 'next_line', 1],
      ['single', 'next_line', 1],
    ]);
  });

  it('splits at maxBytes counting UTF-8 bytes and the joining newlines', () => {
    // 'Traceback (most recent call last):' is 34 bytes; '  é' is 4.
    const records = group(['Traceback (most recent call last):', '  é', '  é'], { maxBytes: 34 + 1 + 4 });
    expect(records.map((r) => [r.closedBy, r.lineCount])).toEqual([['max_bytes', 2], ['flush', 1]]);
    expect(group(['x'.repeat(50) + ': too long for the cap'], { maxBytes: 10 })).toMatchObject([{ lineCount: 1 }]);
  });

  it('groups by a custom rule', () => {
    const rule = { start: /^Exception in thread /, continue: /^\s/ };
    const records = group(['Exception in thread "loader" java.lang.IllegalStateException: closed', '\tat a.B.c(B.java:12)', '\tat a.B.d(B.java:40)', 'Exception in thread "x" y', 'done'], { rule });
    expect(records.map((r) => [r.kind, r.closedBy, r.lineCount])).toEqual([
      ['custom', 'next_line', 3],
      ['custom', 'next_line', 1],
      ['single', 'next_line', 1],
    ]);
  });

  it('lets a headsBlock option decide which lines head a traceback', () => {
    const records = group(['Process SpawnProcess-1:', 'Traceback (most recent call last):', 'KeyboardInterrupt'], { headsBlock: (t) => t.startsWith('Process ') });
    expect(records.map((r) => [r.kind, r.lineCount])).toEqual([['traceback', 3]]);
  });

  it('refuses invalid options with the option named', () => {
    expect(() => new MultilineGrouper({ maxLines: 0 })).toThrow('multiline maxLines must be a positive integer, got 0');
    expect(() => new MultilineGrouper({ maxBytes: 1.5 })).toThrow('maxBytes');
    expect(() => new MultilineGrouper({ maxGapMs: -1 })).toThrow('maxGapMs');
  });
});

describe('defaultHeadsBlock', () => {
  it.each([
    'ERROR:app:request failed',
    'ERROR:    Exception in ASGI application',
    'CRITICAL:root:engine died',
    '2026-03-01 12:00:00,123 - app.api - ERROR - request failed',
    '2026-03-01 12:00:00,123 ERROR app: request failed',
    '[2026-03-01 12:00:00,123] ERROR in app: Exception on /generate [POST]',
    '2026-03-01T12:00:00.123Z [ERROR] worker crashed',
    '2026-03-01 12:00:00.123 | CRITICAL | app.worker:run:42 - worker crashed',
    'ERROR 03-01 12:00:05 [engine.py:160] Engine background loop failed',
    'FATAL: cannot continue',
    'EXCEPTION',
  ])('heads: %s', (text) => {
    expect(defaultHeadsBlock(text)).toBe(true);
  });

  it.each([
    'INFO:app:loaded model info',
    'WARNING:app:slow request',
    'loaded model, no ERROR',
    'ERRORS: 0',
    'error: lower case is not a Python level name',
    '2026-03-01 12:00:00,123 - app.api - INFO - error rate 0.1',
    'INFO:     10.0.0.1:1 - "GET /ERROR HTTP/1.1" 404 Not Found',
    '',
  ])('does not head: %s', (text) => {
    expect(defaultHeadsBlock(text)).toBe(false);
  });
});

describe('worker tags', () => {
  it('groups a traceback whose every line carries a worker tag (vLLM, torch.distributed)', () => {
    for (const tag of ['(VllmWorker rank=0 pid=4242) ', '[rank0]: ', '[default1]:']) {
      const g = new MultilineGrouper();
      const texts = [`${tag}ERROR 11-25 16:30:01 [multiproc_executor.py:470] WorkerProc hit an exception.`, `${tag}Traceback (most recent call last):`, `${tag}  File "/x.py", line 1, in f`, `${tag}    g()`, `${tag}RuntimeError: boom`, `${tag}INFO 11-25 16:30:02 [worker.py:1] next`];
      const out = texts.flatMap((t, i) => g.push({ seq: i + 1, timeNs: BigInt(i) * 1000n, time: `t${i}`, stream: 'stderr', log: t }));
      out.push(...g.flush());
      expect(out.map((r) => [r.lineCount, r.kind]), tag).toEqual([
        [5, 'traceback'],
        [1, 'single'],
      ]);
    }
  });
});
