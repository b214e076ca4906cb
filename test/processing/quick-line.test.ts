// The decision on a line's first bytes is the one the stages take on its text, or none.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { quickHeading, quickLevel } from '../../src/processing/quick-line.js';
import { detectLevelOnly } from '../../src/processing/levels.js';
import { mayBeJsonObject } from '../../src/processing/json-line.js';
import { defaultHeadsBlock, pythonOpens } from '../../src/processing/multiline-python.js';
import { LEVEL_INDEX, LEVELS } from '../../src/processing/types.js';

/** The line's text as the journal holds it: JSON-escaped UTF-8, without the quotes. */
function journalForm(log: string): Buffer {
  return Buffer.from(JSON.stringify(log).slice(1, -1));
}

const starts = fc.constantFrom(
  'INFO', 'INFO:', 'INFO ', 'INFO\t', 'INFO\u00a0', 'DEBUG', 'WARNING:root:', 'WARN ', 'WARNINGS ', 'TRACE ', 'NOTICE:', 'SUCCESS ', 'PANIC: ',
  'ERROR:', 'ERR ', 'CRITICAL ', 'FATAL ', 'EXCEPTION ', 'Traceback (most recent call last):', '+ Exception', 'I1125 16:30:01 x', 'W1125 ',
  '(VllmWorker rank=0 pid=1) INFO x', '[rank0]: INFO', '[ERROR] x', '2026-11-25 16:30:01,123 - app - ERROR - x', 'level=warn ', 'x.py:1: FutureWarning: ',
  '/opt/a.py:61: UserWarning: ', 'a.py:1: FutureWarning: x', 'x.py: ', '.py:', 'ab:c', 'request body={"a":1}', 'print output', 'level=warn ',
  'LEVEL=error ', 'lvl=info', 'ts=1 level=info ', 'time="x" lvl=error ', 't=2 level=debug', 'tsx=1 level=warn', 'levels=warn', 'a\tb', 'aü', '.', '-- ', '=== ', '* ', '> ', '# ', '@', '{"level": "info"}', ' {', '{', '}', '"quoted"', '\\path', 'ü', '😀', '',
  '推理完成 ✓', 'Ответ готов', 'λ=0.001', '\u00a0{"level": "error"}', '\u3000+ Exception Group Traceback (most recent call last):', '\ufeff{"a":1}',
  '\u2003INFO x', '\u1680', '\u205f{', '\u0085x',
  'Traceback (most recent call last):\n  File "x", line 1', 'Traceback (most recent call last): \t', 'Traceback (most recent call last):\u000b',
  'Traceback (most recent call last):\u00a0', 'Traceback (most recent call last):\\', 'Traceback (most recent call last):\b', 'Traceback',
  'Starting server', 'Model loaded', 'D1125 16:30:01.1 x', 'I1125 16:30:01 x', 'W1', 'INFO', 'INFO\u00a0x', 'TRACE:', 'TRACEx', 'Zebra', 'X',
);

/**
 * Runs `check` on lines made of the starts above and short binary strings, each in its journal
 * form alone and inside a longer buffer (the text at bytes [from, to) of `buf`).
 */
function forLines(check: (log: string, buf: Buffer, from: number, to: number) => void): void {
  fc.assert(
    fc.property(starts, fc.string({ unit: 'binary', maxLength: 6 }), starts, (a, b, c) => {
      for (const log of [a + b, a + c, a, a + b + c, b + a]) {
        const bytes = journalForm(log);
        const padded = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('"}')]);
        for (const [buf, from] of [[bytes, 0], [padded, 2]] as const) check(log, buf, from, from + bytes.length);
      }
    }),
    { numRuns: 3000 },
  );
}

describe('quickLevel', () => {
  it('is -1, or the level of a line that is no JSON object and opens no python block', () => {
    forLines((log, buf, from, to) => {
      const quick = quickLevel(buf, from, to);
      if (quick < 0) return;
      const level = detectLevelOnly(log);
      expect(quick, JSON.stringify(log)).toBe(level === undefined ? LEVELS.length : LEVEL_INDEX[level]);
      expect(mayBeJsonObject(log), JSON.stringify(log)).toBe(false);
      expect(pythonOpens(log, defaultHeadsBlock), JSON.stringify(log)).toBeUndefined();
    });
  });

  it('decides the usual lines', () => {
    expect(quickHeading(journalForm('ERROR [worker-3] CUDA out of memory'), 0, 34)).toBe(LEVEL_INDEX.error);
    expect(quickHeading(journalForm('CRITICAL:root:down'), 0, 18)).toBe(LEVEL_INDEX.fatal);
    expect(quickHeading(journalForm('ERR: x'), 0, 6)).toBe(-1);
    expect(quickHeading(journalForm('ERRORS: x'), 0, 9)).toBe(-1);
    expect(quickHeading(journalForm('INFO x'), 0, 6)).toBe(-1);
    for (const [log, level] of [['INFO [worker-1] POST /predict 200', 'info'], ['DEBUG batch 1', 'debug'], ['WARNING: GPU memory at 88%', 'warn'], ['INFO:     127.0.0.1 - "GET /"', 'info']] as const) {
      expect(quickLevel(journalForm(log), 0, journalForm(log).length)).toBe(LEVEL_INDEX[level]);
    }
    expect(quickLevel(journalForm('-- no level'), 0, 11)).toBe(LEVELS.length);
    expect(quickLevel(journalForm('request body=x took=3ms'), 0, 24)).toBe(LEVELS.length);
    const entry = journalForm('Traceback (most recent call last):\n  File "/app/server.py", line 1, in handle\nRuntimeError: x');
    expect(quickLevel(entry, 0, entry.length)).toBe(LEVELS.length);
    const first = journalForm('Traceback (most recent call last):');
    expect(quickLevel(first, 0, first.length)).toBe(-1);
    expect(quickLevel(journalForm('Starting server'), 0, 15)).toBe(LEVELS.length);
  });

  it('quickHeading is -1, or the level of a line that heads a python block and is no JSON object', () => {
    forLines((log, buf, from, to) => {
      const quick = quickHeading(buf, from, to);
      if (quick < 0) return;
      const level = detectLevelOnly(log);
      expect(level, JSON.stringify(log)).toBeDefined();
      expect(quick, JSON.stringify(log)).toBe(LEVEL_INDEX[level!]);
      expect(mayBeJsonObject(log), JSON.stringify(log)).toBe(false);
      expect(pythonOpens(log, defaultHeadsBlock), JSON.stringify(log)).toBe('heading');
    });
  });
});
