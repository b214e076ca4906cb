//! The NDJSON line format: key order, escaping, awkward logs.
import { describe, expect, it } from 'vitest';
import { entryToNdjson } from '../../src/sinks/format.js';
import { entry } from './file/helpers.js';

describe('entryToNdjson', () => {
  it('writes the keys in order model_id, time, stream, log, with the time unchanged', () => {
    const e = entry(1, { model: 'llama-3', time: '2026-11-22T10:15:00.1234Z', stream: 'stderr', log: 'hello' });
    expect(entryToNdjson(e)).toBe('{"model_id":"llama-3","time":"2026-11-22T10:15:00.1234Z","stream":"stderr","log":"hello"}\n');
  });

  it.each([
    ['multi-line', 'first\nsecond\r\nthird'],
    ['unicode', 'naïve — 日本語 — 🦙 — \u2028'],
    ['quotes and control characters', 'say "hi" \\ \t \u0000 \u001f'],
    ['empty', ''],
    ['9 KB', 'x'.repeat(9 * 1024) + 'é'],
    ['a lone surrogate', 'bad \ud800 half'],
  ])('keeps a %s log on one line that parses back to the same value', (_name, log) => {
    const line = entryToNdjson(entry(1, { log }));
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r]/);
    const parsed = JSON.parse(line) as Record<string, string>;
    expect(Object.keys(parsed)).toEqual(['model_id', 'time', 'stream', 'log']);
    expect(parsed.log).toBe(log);
    expect(line).toBe(JSON.stringify({ model_id: 'm1', time: '2026-11-22T10:00:00.000000001Z', stream: 'stdout', log }) + '\n');
  });

  it('escapes model ids and streams too', () => {
    const line = entryToNdjson(entry(1, { model: 'a"b', stream: 'std\nout' }));
    expect(JSON.parse(line)).toMatchObject({ model_id: 'a"b', stream: 'std\nout' });
  });
});
