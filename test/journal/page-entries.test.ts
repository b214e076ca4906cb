// A journal page's entries, read back from its NDJSON lines, are exactly the entries
// written, whatever their strings hold (quotes, backslashes, escapes, unicode, control
// characters, lone surrogates).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JournalPage } from '../../src/journal/pages.js';
import { entryToNdjson } from '../../src/records/ndjson.js';
import type { SinkEntry } from '../../src/records/entry.js';
import { runs } from '../helpers/long.js';

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '"', '\\', '\\"', '"\\', 'a\\\\"b', '}\n{"x":1}', '\u2028\u2029', '\ud800', 'tab\tnew\nline', 'stdout', '","log":"'),
);

describe('journal page entries', () => {
  it('read back exactly the entries whose lines the page holds', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.array(fc.record({ time: text, stream: text, log: text }), { minLength: 1, maxLength: 20 }), (modelId, rows) => {
        const entries: SinkEntry[] = rows.map((r, i) => ({ seq: 7 + i, modelId, time: r.time, timeNs: BigInt(i), stream: r.stream, log: r.log, fetchedAtMs: 5 }));
        const page = new JournalPage(7, modelId, 5, Buffer.from(entries.map(entryToNdjson).join('')), new BigInt64Array(entries.map((e) => e.timeNs)));
        // JSON keeps what it can: a lone surrogate comes back as the replacement character, as before.
        const want = entries.map((e) => ({ ...e, time: roundTrip(e.time), stream: roundTrip(e.stream), log: roundTrip(e.log) }));
        expect(page.entries()).toEqual(want);
      }),
      { numRuns: runs(500) },
    );
  });
});

function roundTrip(s: string): string {
  return Buffer.from(JSON.stringify(s)).toString('utf8') === JSON.stringify(s) ? s : (JSON.parse(Buffer.from(JSON.stringify(s)).toString('utf8')) as string);
}
