// The built-in patterns (level presets, the python multiline rule, the `secrets` redaction
// preset) stay on V8's backtracking engine, which is fast on ordinary lines. They may only
// because no text makes them backtrack more than linearly: on adversarial text of n and 8n
// characters, the time grows about 8 times, never about 64 times (quadratic). The bound is
// a very generous ratio of the best of several runs, not a time. Nor does any of them throw
// on a 6 MB line (V8 keeps a backtracking entry per character of some loops).
import { describe, expect, it } from 'vitest';
import { detectLevel } from '../../src/processing/levels.js';
import { defaultHeadsBlock, pythonContinues, pythonOpens, type BlockPhase } from '../../src/processing/multiline-python.js';
import { compileRedactions } from '../../src/processing/redact.js';
import { expectLinearTime } from '../helpers/linear-time.js';

const N = 20_000;
const PHASES: BlockPhase[] = ['heading', 'frames', 'raised', 'chain', 'group'];
const secrets = compileRedactions([], { secretsPreset: true });

/** Every built-in pattern a line meets. */
function allPresets(line: string): void {
  detectLevel(line);
  pythonOpens(line, defaultHeadsBlock);
  for (const phase of PHASES) pythonContinues(phase, line);
  secrets(line);
}

/** Texts of n characters (about) that make a careless pattern backtrack: long runs of what the presets' classes take, after the prefixes that let them start. */
const ADVERSARIAL: ReadonlyArray<[string, (n: number) => string]> = [
  ['spaces', (n) => ' '.repeat(n) + 'x'],
  ['letters', (n) => 'a'.repeat(n) + '!'],
  ['capitals', (n) => 'A'.repeat(n) + '!'],
  ['digits', (n) => '1'.repeat(n) + '!'],
  ['word characters and dots', (n) => 'a.'.repeat(n / 2) + '!'],
  ['opening brackets', (n) => '['.repeat(n)],
  ['opening parentheses', (n) => '('.repeat(n)],
  ['a time stamp, then spaces', (n) => '2026-11-25 16:30:01,123' + ' '.repeat(n) + 'x'],
  ['a time stamp, then dashes', (n) => '2026-11-25 16:30:01,123 ' + '- a '.repeat(n / 4) + 'x'],
  ['brackets after a time stamp', (n) => '2026-11-25 16:30:01 ' + '[x] '.repeat(n / 4)],
  ['bracketed tags', (n) => '[x]'.repeat(n / 3) + 'x'],
  ['worker tags', (n) => '(Worker' + ' a=b'.repeat(n / 4)],
  ['rank tags', (n) => '[rank0]: '.repeat(n / 9)],
  ['a python warning without its word', (n) => 'a.py:1: ' + 'a'.repeat(n) + ': x'],
  ['a path without .py', (n) => '/'.repeat(n) + ':'],
  ['logfmt keys', (n) => 't=' + 'a'.repeat(n) + ' x'],
  ['logfmt pairs', (n) => 'time=x '.repeat(n / 7) + 'x'],
  ['an ERROR word, then spaces', (n) => 'ERROR' + ' '.repeat(n) + 'x'],
  ['a traceback line, then spaces', (n) => 'Traceback (most recent call last):' + ' '.repeat(n) + 'x'],
  ['an exception line', (n) => 'A'.repeat(n) + ':x'],
  ['an exception group, then spaces', (n) => ' '.repeat(n) + '+ Exception Group Traceback (most recent call last): x'],
  ['colour codes', (n) => '\x1b[1;'.repeat(n / 4)],
  ['bearer words', (n) => 'bearer '.repeat(n / 7)],
  ['a bearer token of letters', (n) => 'Bearer ' + 'a'.repeat(n)],
  ['an authorization value', (n) => 'authorization: bearer ' + '='.repeat(n) + 'x'],
  ['token prefixes', (n) => 'sk-'.repeat(n / 3)],
  ['hugging face prefixes', (n) => 'hf_'.repeat(n / 3)],
  ['AWS key prefixes', (n) => 'AKIA'.repeat(n / 4)],
  ['an AWS secret key name', (n) => 'aws_secret_access_key='.repeat(n / 22)],
];

describe('the built-in patterns on V8', () => {
  it.each(ADVERSARIAL)('take time linear in the line: %s', (_name, text) => {
    expectLinearTime(allPresets, text, N, 3);
  });

  it('throw on no 6 MB line of any of these kinds', () => {
    for (const [name, text] of ADVERSARIAL) expect(() => allPresets(text(6 * 1024 * 1024)), name).not.toThrow();
  });
});
