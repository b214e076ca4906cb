//! The NDJSON line format: key order, escaping, awkward logs; the journal's line builder renders the same bytes.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NdjsonLineBuilder, entryToNdjson } from '../../src/records/ndjson.js';
import { entry } from '../sinks/file/helpers.js';
import { runs } from '../helpers/long.js';

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

describe('NdjsonLineBuilder', () => {
  const reference = (modelId: string, time: string, stream: string, log: string) => entryToNdjson({ seq: 1, modelId, time, timeNs: 0n, stream, log, fetchedAtMs: 0 });
  /** One line as the journal renders it: the builder's pieces, joined. */
  const line = (b: NdjsonLineBuilder, time: string, stream: string, log: string): string => {
    const out: string[] = [];
    b.push(out, time, stream, log);
    return out.join('');
  };

  it('renders exactly what entryToNdjson renders, for any model id, time, stream and log', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    const times = fc.oneof(fc.constant('2026-11-22T10:15:00.123456789Z'), fc.constant('2026-11-22T10:15:00+02:00'), text);
    const streams = fc.oneof(fc.constantFrom('stdout', 'stderr'), text);
    fc.assert(
      fc.property(text, fc.array(fc.record({ time: times, stream: streams, log: text }), { maxLength: 8 }), (model, rows) => {
        const b = new NdjsonLineBuilder(model);
        for (const r of rows) expect(line(b, r.time, r.stream, r.log)).toBe(reference(model, r.time, r.stream, r.log));
      }),
      { numRuns: runs(2_000), seed: 11 },
    );
  });

  it('escapes times and streams that need it, and lone surrogates anywhere', () => {
    const b = new NdjsonLineBuilder('m"1');
    for (const [time, stream, log] of [
      ['2026-11-22T10:00:00Z"', 'std\nout', 'x'],
      ['bad \ud800 time', 'stdout', 'y \udfff'],
      ['2026-11-22T10:00:00Z', 'stderr', 'z'],
    ] as const) {
      const text = line(b, time, stream, log);
      expect(text).toBe(reference('m"1', time, stream, log));
      expect(JSON.parse(text)).toEqual({ model_id: 'm"1', time, stream, log });
      expect(text.slice(0, -1)).not.toMatch(/[\n\r\ud800-\udfff]/);
    }
  });
});
