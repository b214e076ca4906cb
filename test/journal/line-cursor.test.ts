// The line cursor reads what the page's decode reads, line by line, whatever the text holds
// (other than ASCII, escapes, odd streams) and wherever the slice starts and ends.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JournalPage } from '../../src/journal/pages.js';
import { PageLineCursor } from '../../src/journal/line-cursor.js';
import { entryToNdjson } from '../../src/records/ndjson.js';
import type { SinkEntry } from '../../src/records/entry.js';

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('INFO: ok', 'plain ünïcode "quoted"', 'C:\\path\\"x"', 'tab\there', 'a\nb', '😀 emoji', '', '{"k": "v"}', '\u2028'),
);

function page(modelId: string, lines: ReadonlyArray<{ stream: string; log: string; time: string }>): JournalPage {
  const times = new BigInt64Array(lines.map((_, i) => 1_000_000n * BigInt(i + 1)));
  const entries: SinkEntry[] = lines.map((l, i) => ({ seq: 10 + i, modelId, time: l.time, timeNs: times[i]!, stream: l.stream, log: l.log, fetchedAtMs: 5 }));
  return new JournalPage(10, modelId, 5, Buffer.from(entries.map(entryToNdjson).join('')), times);
}

describe('PageLineCursor', () => {
  it('gives each line of a slice as decode does', () => {
    const line = fc.record({ stream: fc.oneof(fc.constantFrom('stdout', 'stderr'), fc.constantFrom('stderx', 'stdoux', 'stdou', 'stdoutt', 'stdErr', 'std', 'xtdout', 'Stderr'), text), log: text, time: fc.constantFrom('2026-11-25T16:30:01.123Z', 't"q', 'ü') });
    fc.assert(
      fc.property(fc.constantFrom('m', 'modèle', 'a"b'), fc.array(line, { minLength: 1, maxLength: 12 }), fc.nat(), fc.nat(), (modelId, lines, a, b) => {
        const p = page(modelId, lines);
        const all = page(modelId, lines).decode();
        const from = a % lines.length;
        const to = from + 1 + (b % (lines.length - from));
        const c = new PageLineCursor(p, from, to);
        for (let i = from; i < to; i++) {
          expect(c.next()).toBe(true);
          expect([c.index, c.stream, c.timeNs]).toEqual([i, all[i]!.stream, all[i]!.timeNs]);
          expect(c.entry()).toEqual(all[i]);
          // Where the cursor found the text in the page's bytes, it is the text in its JSON form.
          if (c.logFrom >= 0) expect(JSON.parse('"' + c.bytes.toString('utf8', c.logFrom, c.logTo) + '"')).toBe(all[i]!.log);
          expect(all[i]!.log).toBe(lines[i]!.log);
          expect(c.log).toBe(all[i]!.log);
        }
        expect(c.next()).toBe(false);
        // Lines of the usual shape are found in the bytes.
        const usual = lines.slice(from, to).every((l) => (l.stream === 'stdout' || l.stream === 'stderr') && !l.time.includes('"'));
        if (usual) {
          const again = new PageLineCursor(p, from, to);
          while (again.next()) expect(again.logFrom).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 500 },
    );
  });
});
