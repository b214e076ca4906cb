//! The exception of a traceback record, read from CPython's own output: every shape
//! `traceback` prints (chains, exception groups, SyntaxError, no message, dotted types), as
//! one text and as the lines processing groups; nothing from text that is no traceback; and
//! linear, total work on hostile text.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { exceptionOf } from '../../src/processing/exception.js';
import { ModelProcessor } from '../../src/processing/pipeline.js';
import type { ProcessLine } from '../../src/processing/types.js';
import { pythonTracebacks, type PythonTraceback } from '../helpers/python-tracebacks.js';
import { runs } from '../helpers/long.js';
import { expectLinearTime } from '../helpers/linear-time.js';

const printed = pythonTracebacks();
const expected = (t: PythonTraceback) => ({ type: t.type, ...(t.message ? { message: t.message } : {}), ...(t.chain ? { chain: t.chain } : {}) });
const byName = (name: string): PythonTraceback => printed.find((t) => t.name === name)!;

/** Lines as a model's entries, 1 ms apart from `ms`. */
function lines(texts: readonly string[], ms = 0): ProcessLine[] {
  return texts.map((log, i) => ({ seq: i + 1, timeNs: BigInt(ms + i) * 1_000_000n, time: `t${i}`, stream: 'stderr', log }));
}

describe('exceptionOf on CPython output', () => {
  it('prints every shape the test asks for', () => {
    expect(printed.map((t) => t.name)).toEqual(expect.arrayContaining(['group', 'group_caused', 'syntax_error', 'no_message', 'three_deep', 'torch_oom']));
    expect(byName('torch_oom').type).toBe('torch.OutOfMemoryError');
    expect(byName('dotted').type).toBe('json.decoder.JSONDecodeError');
    expect(byName('group').text).toContain('+-+----');
    expect(byName('syntax_error').text).toMatch(/\n +\^\nSyntaxError: /);
    expect(byName('no_message').message).toBeUndefined();
    expect(byName('three_deep').chain).toEqual(['KeyError', 'ValueError']);
    expect(byName('group_caused').chain).toEqual(['ExceptionGroup']);
  });

  it.each(printed.map((t) => [t.name, t] as const))('reads %s as Python says it is', (_name, t) => {
    expect(exceptionOf(t.text)).toEqual(expected(t));
    // One entry written with its final newline (and a blank line after).
    expect(exceptionOf(`${t.text}\n\n`)).toEqual(expected(t));
    // Headed by the logging line of `logger.exception`, and with a worker's tag on every line.
    expect(exceptionOf(`2026-11-25 16:30:01,120 - app - ERROR - request failed\n${t.text}`)).toEqual(expected(t));
    expect(exceptionOf(t.text.split('\n').map((l) => `(VllmWorker rank=0 pid=4242) ${l}`).join('\n'))).toEqual(expected(t));
  });

  it('gives the record of each printed traceback its exception, whether it came one line per entry or as one entry', () => {
    // One line per entry, an unindented line after the exception line is taken as the next log
    // line (docs/processing.md): these two messages go on in such lines, which become records of their own.
    const cut: Record<string, { message: string; lines: number }> = {
      multi_line_message: { message: 'first line\n  indented second line', lines: 1 },
      with_note: { message: "'input_ids'", lines: 1 },
    };
    for (const t of printed) {
      const texts = t.text.split('\n');
      const perLine = new ModelProcessor({ modelId: 'm' }).push(lines(['ERROR:app:request failed', ...texts, 'INFO:     done'])).records;
      const rest = cut[t.name]?.lines ?? 0;
      expect(perLine.map((r) => r.lines ?? 1), t.name).toEqual([texts.length + 1 - rest, ...Array<number>(rest).fill(1), 1]);
      expect(perLine[0]!.exception, t.name).toEqual({ ...expected(t), ...(cut[t.name] ? { message: cut[t.name]!.message } : {}) });
      expect(perLine[0]!.level, t.name).toBe('error');
      expect(perLine.slice(1).map((r) => r.exception), t.name).toEqual(perLine.slice(1).map(() => undefined));

      const whole = new ModelProcessor({ modelId: 'm' }).push(lines([t.text])).records;
      expect(whole, t.name).toHaveLength(1);
      expect(whole[0]!.exception, t.name).toEqual(expected(t));
      // A traceback written whole names no level of its own: it is an error.
      expect(whole[0]!.level, t.name).toBe('error');
    }
  });
});

describe('exceptionOf on other text', () => {
  it.each([
    ['a plain line', 'ValueError: not after a traceback'],
    ['lines with no traceback', 'INFO: a\nValueError: b\nKeyError'],
    ['a traceback cut before its exception line', 'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n    f()'],
    ['a header and a joiner only', 'Traceback (most recent call last):\n\nThe above exception was the direct cause of the following exception:\n'],
    ['an exception line with spaces in its type', 'Traceback (most recent call last):\n  File "a.py", line 1\nnot a type: x'],
    ['a type too long to be a name', `Traceback (most recent call last):\n  File "a.py", line 1\n${'a.'.repeat(200)}Error: x`],
    ['an empty text', ''],
  ])('finds none in %s', (_name, text) => {
    expect(exceptionOf(text)).toBeUndefined();
  });

  it('leaves JSON lines and single lines alone, and gives a record without a traceback no field', () => {
    const records = new ModelProcessor().push(
      lines(['{"event": "Traceback (most recent call last):\\nValueError: x", "level": "error"}', 'KeyError: \'input_ids\'', 'INFO: ok\nValueError: no header']),
    ).records;
    expect(records.map((r) => r.exception)).toEqual([undefined, undefined, undefined]);
    expect(records.map((r) => r.level)).toEqual(['error', undefined, 'info']);
  });

  it('reads the last of two tracebacks of one text that no joiner links', () => {
    const [a, b] = [byName('plain'), byName('direct_cause')];
    expect(exceptionOf(`${a.text}\n${b.text}`)).toEqual(expected(b));
    expect(exceptionOf(`${b.text}\n${a.text}`)).toEqual(expected(a));
  });
});

describe('exceptionOf on hostile text', () => {
  const pieces = fc.constantFrom(
    'Traceback (most recent call last):',
    '  + Exception Group Traceback (most recent call last):',
    '+ Exception Group Traceback (most recent call last):',
    'The above exception was the direct cause of the following exception:',
    'During handling of the above exception, another exception occurred:',
    '  |   File "a.py", line 1, in f',
    '  | ValueError: a',
    '  +-+---- 1 ----',
    '    | KeyError: k',
    '|',
    '  |',
    '',
    '  File "a.py", line 1',
    'ValueError: v',
    'E',
    '[rank0]: KeyError',
    ':',
    'A'.repeat(300) + ': long',
  );

  it('never throws, and gives a type that is a Python name, for any mix of traceback lines (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 40 }), (parts) => {
        const e = exceptionOf(parts.join('\n'));
        if (e !== undefined) {
          expect(e.type).toMatch(/^[A-Za-z_][\w.]{0,255}$/);
          for (const t of e.chain ?? []) expect(t).toMatch(/^[A-Za-z_][\w.]{0,255}$/);
        }
      }),
      { numRuns: runs(3_000), seed: 49 },
    );
  });

  /** Texts of about n characters built to make a careless reader do quadratic work. */
  const ADVERSARIAL: ReadonlyArray<[string, (n: number) => string]> = [
    ['joiners and tracebacks', (n) => 'Traceback (most recent call last):\nE: x\n' + 'The above exception was the direct cause of the following exception:\nTraceback (most recent call last):\nE: x\n'.repeat(n / 110)],
    ['a deep group margin', (n) => ' '.repeat(n / 2) + '+ Exception Group Traceback (most recent call last):\n' + ' '.repeat(n / 4) + '| E: x\n' + ' |\n'.repeat(n / 12)],
    ['group headers', (n) => '  + Exception Group Traceback (most recent call last):\n  | E\n'.repeat(n / 60)],
    ['a long exception line', (n) => 'Traceback (most recent call last):\n' + 'A'.repeat(n) + ':x'],
    ['a long message', (n) => 'Traceback (most recent call last):\nE: ' + 'x\n'.repeat(n / 2)],
    ['spaces after the exception', (n) => 'Traceback (most recent call last):\nE' + ' '.repeat(n) + 'x'],
    ['worker tags', (n) => '[rank0]: '.repeat(n / 18) + 'Traceback (most recent call last):\n' + '[rank0]: '.repeat(n / 18) + 'E: x'],
  ];
  const N = 40_000;

  it.each(ADVERSARIAL)('takes time linear in the text: %s', (_name, text) => {
    expectLinearTime(exceptionOf, text, N);
  });
});
