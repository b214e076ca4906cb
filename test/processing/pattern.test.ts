// User patterns run on RE2: what RE2 cannot run is refused with a reason a person
// understands, what it can run behaves as the same JavaScript pattern on ordinary lines, and
// a pattern that backtracks for hours on V8's engine completes at once on every path a user
// pattern takes (redaction, drop, level and multiline rules).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileNonEmptyPattern, compilePattern } from '../../src/processing/pattern.js';
import { compileRedactions } from '../../src/processing/redact.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('compilePattern', () => {
  it.each([
    ['(a)\\1', 'backreferences (\\1, \\k<name>) are not supported'],
    ['(?<q>["\'])x\\k<q>', 'backreferences (\\1, \\k<name>) are not supported'],
    ['token(?=:)', 'lookahead and lookbehind are not supported'],
    ['token(?!:)', 'lookahead and lookbehind are not supported'],
    ['(?<=key=)\\w+', 'lookahead and lookbehind are not supported'],
    ['(?<!no )error', 'lookahead and lookbehind are not supported'],
    ['\\d++', 'possessive quantifiers (a++, a*+, a?+) are not supported'],
    ['x{2}+', 'possessive quantifiers (a++, a*+, a?+) are not supported'],
    ['(?>ab|a)c', 'atomic groups are not supported'],
    ['a**', 'a repetition of a repetition (a**, a{2}{3}) is not allowed: put the inner one in a group'],
    ['caf\\u00e9', '\\uXXXX is not supported: write \\x{XXXX}'],
    ['a{2,1001}', 'repeat counts above 1000 are not supported'],
    ['(unclosed', 'missing closing ): `(unclosed`'],
  ])('refuses %s: %s', (source, reason) => {
    expect(() => compilePattern(source)).toThrow(new Error(reason));
  });

  it('runs what JavaScript users write: classes, anchors, named groups, (?i:…), \\x{…}, case-insensitive rules', () => {
    expect(compilePattern('^\\[\\d{4}-\\d\\d').test('[2026-11 x')).toBe(true);
    expect((compilePattern('(?<level>WARN|ERROR)\\b').exec('x ERROR y') as RegExpExecArray | null)?.groups?.level).toBe('ERROR');
    expect(compilePattern('(?i:bearer) \\S+').test('BEARER abc')).toBe(true);
    expect(compilePattern('caf\\x{e9}').test('café')).toBe(true);
    expect(compilePattern('oom', { ignoreCase: true }).test('CUDA OOM')).toBe(true);
    expect(() => compileNonEmptyPattern('x*')).toThrow('it matches the empty string, so it would match every line');
  });

  it("replaces with today's syntax: $1, $<name>, $& and $$", () => {
    const r = compileRedactions([
      { pattern: 'secret-(\\d+)', replacement: '[$1]' },
      { pattern: '(?<k>token)=\\w+', replacement: '$<k>=$$$&' },
    ]);
    expect(r('pw secret-123 token=abc')).toBe('pw [123] token=$token=abc');
  });
});

describe('a pattern that backtracks catastrophically on V8', () => {
  // Run in a child process: a backtracking engine would block the test's own thread, and a
  // watchdog must be able to stop it.
  it('(a+)+$ against 34 × a and ! completes as a redaction, drop, level and multiline rule, global and per sink', () => {
    const code = `
      import { processingSchema } from './dist/config/processing.js';
      import { sinkProcessing } from './dist/delivery/processing/compile.js';
      import { ModelProcessor } from './dist/processing/pipeline.js';
      const p = '(a+)+$';
      const processing = processingSchema.parse({
        multiline: { rule: { start: p, continue: p } },
        levels: { rules: [{ match: p, level: 'error' }] },
        redact: { rules: [{ pattern: p }] },
        drop: [{ match: p }],
      });
      const log = 'a'.repeat(34) + '!';
      const line = { seq: 1, time: 't', timeNs: 1n, stream: 'stdout', log };
      const out = [];
      for (const sink of [{ raw: false }, { raw: false, drop: [{ match: p }] }]) {
        const processor = new ModelProcessor(sinkProcessing(processing, sink).processor);
        const records = [...processor.push([line]).records, ...processor.flush().records];
        out.push(records.map((r) => [r.log, r.level ?? null]));
      }
      console.log(JSON.stringify(out));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.error, 'the child did not finish within 60 s').toBeUndefined();
    expect(r.stderr).toBe('');
    const log = 'a'.repeat(34) + '!';
    expect(JSON.parse(r.stdout)).toEqual([[[log, null]], [[log, null]]]);
  });
});
