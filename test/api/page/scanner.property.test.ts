// The scanner against the plain reader it stands in for (JSON.parse and the validation),
// over generated bodies as bytes: whatever the scanner accepts, the plain reader accepts
// with exactly the same entries and token; every well-formed body of the generator is
// accepted by the scanner; and the page prepared from the scan has the times, hashes,
// reasons and NDJSON lines of the page prepared from the parsed entries.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readJsonPage, type ObjectsPage } from '../../../src/api/page/json.js';
import { scanPage } from '../../../src/api/page/scanner.js';
import { ScannedPage } from '../../../src/api/page/scanned-page.js';
import { preparePage } from '../../../src/poller/prepare.js';
import { arbitrary, broken, nastyText, offSpecEntry, wellFormed } from './wire-arbitraries.js';
import { runs } from '../../helpers/long.js';

const RUNS = runs(3_000);

/** Bytes a service could send that a string generator cannot: invalid UTF-8, escapes JSON.stringify never writes, odd spacing. */
const byteLevel: fc.Arbitrary<{ category: string; body: Buffer }> = fc.oneof(
  fc
    .record({
      parts: fc.array(
        fc.oneof(
          { weight: 1, arbitrary: nastyText.map((t) => JSON.stringify(t).slice(1, -1)) },
          { weight: 4, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }).map((t) => JSON.stringify(t).slice(1, -1)) },
          { weight: 4, arbitrary: fc.constantFrom('\\/', '\\"', '\\\\', '\\b\\f\\n\\r\\t', '\\n', 'plain', '\u007f') },
          { weight: 1, arbitrary: fc.constantFrom('\\/', '\\u0041', '\\u00e9', '\\ud83d\\ude00', '\\ud800', '\\u001f') },
        ),
        { maxLength: 6 },
      ),
      field: fc.constantFrom('time', 'stream', 'log'),
      invalid: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b.map((x) => x | 0x80))) }),
      ws: fc.constantFrom('', ' ', '\n\t ', '\r\n'),
    })
    .map(({ parts, field, invalid, ws }) => {
      const fields: Record<string, Buffer> = { time: Buffer.from('2024-05-01T12:00:00.5Z'), stream: Buffer.from('stdout'), log: Buffer.from('x') };
      fields[field] = Buffer.concat([Buffer.from(parts.join('')), invalid ?? Buffer.alloc(0)]);
      const entry = (f: string) => Buffer.concat([Buffer.from(`${ws}"${f}"${ws}:${ws}"`), fields[f]!, Buffer.from('"')]);
      const body = Buffer.concat([
        Buffer.from(`${ws}{${ws}"status"${ws}:${ws}"success"${ws},${ws}"details"${ws}:${ws}[${ws}{`),
        entry('log'),
        Buffer.from(','),
        entry('time'),
        Buffer.from(','),
        entry('stream'),
        Buffer.from(`${ws}}${ws}]${ws}}${ws}`),
      ]);
      return { category: 'bytes', body };
    }),
  fc.uint8Array({ maxLength: 120 }).map((b) => ({ category: 'random bytes', body: Buffer.from(b) })),
  fc.constantFrom(
    '\ufeff{"status":"success","details":[]}',
    '{"status":"success","status":"success","details":[]}',
    '{"status":"success","details":[{"time":"a","time":"b","log":"l","stream":"s"}]}',
    '{"status":"success","details":[],"details":[{"time":"a","log":"l","stream":"s"}]}',
    '{"status":"success","details":[],"next_token":"a","next_token":null}',
    '{"st\\u0061tus":"success","details":[]}',
    '{"status":"succ\\u0065ss","details":[]}',
    '{"status":"success","details":[{"t\\u0069me":"a","time":"b","log":"l","stream":"s"}]}',
    '{"status":"success","details":[{"time":"a","log":"l","stream":"s","n":-0.5e+3,"m":[true,false,null,{}],"o":{"a":[]}}]}',
    '{"status":"success","details":[{"time":"a","log":"l","stream":"s","n":01}]}',
    '{"status":"success","details":[{"time":"a","log":"l","stream":"s","n":1.}]}',
    '{"status":"success","details":[{"time":"a","log":"l","stream":"s"},]}',
    '{"status":"success","details":[],}',
    '{"status":"success","details":[]} x',
    '{"status":"success","details":[{"time":"a","log":"l\x01","stream":"s"}]}',
    '{"status":"success","details":[{"time":"a","log":"\\x","stream":"s"}]}',
    '{"status":"success","details":[],"next_token":"t\\/k"}',
    '{"status":"success","details":[{}]}',
  ).map((text) => ({ category: 'edge', body: Buffer.from(text) })),
);

describe('the scanner over generated bodies', () => {
  it(`agrees with the plain reader on ${RUNS} bodies, and prepares the same page`, { timeout: 120_000 }, () => {
    const tally = new Map<string, { scanned: number; parsedOnly: number; refused: number }>();
    fc.assert(
      fc.property(
        fc.oneof(
          { weight: 3, arbitrary: wellFormed.map((c) => ({ category: c.category, body: Buffer.from(c.body) })) },
          { weight: 2, arbitrary: broken.map((c) => ({ category: 'broken', body: Buffer.from(c.body) })) },
          { weight: 1, arbitrary: offSpecEntry.map((c) => ({ category: 'off-spec entry', body: Buffer.from(c.body) })) },
          { weight: 2, arbitrary: arbitrary.map((c) => ({ category: 'arbitrary', body: Buffer.from(c.body) })) },
          { weight: 3, arbitrary: byteLevel },
        ),
        fc.integer({ min: 0, max: 0x7fffffff }),
        ({ category, body }, mask) => {
          const t = tally.get(category) ?? { scanned: 0, parsedOnly: 0, refused: 0 };
          tally.set(category, t);
          let parsed: ObjectsPage | undefined;
          try {
            parsed = readJsonPage(body, 200);
          } catch {
            parsed = undefined;
          }
          const scan = scanPage(body);
          if (scan === undefined) {
            if (parsed) t.parsedOnly++;
            else t.refused++;
            if (category === 'well-formed') expect.fail(`the scanner left a well-formed body to the parser: ${body.toString('utf8').slice(0, 300)}`);
            return;
          }
          t.scanned++;
          const page = new ScannedPage(scan);
          expect(parsed, `the scanner accepted a body the parser refuses: ${body.toString('utf8').slice(0, 300)}`).toBeDefined();
          expect(page.entries).toEqual(parsed!.entries);
          expect(page.nextToken).toBe(parsed!.nextToken);

          const fromScan = preparePage(page, 1_714_564_800_000);
          const fromEntries = preparePage(parsed!, 1_714_564_800_000);
          expect(fromScan.invalid && [...fromScan.invalid]).toEqual(fromEntries.invalid && [...fromEntries.invalid]);
          expect([...fromScan.timesNs]).toEqual([...fromEntries.timesNs]);
          expect([...fromScan.hashes]).toEqual([...fromEntries.hashes]);
          const n = page.count;
          // The earlier hash, for buckets written before the current one, agrees across both paths too.
          const legacy = (page: { legacyHash(i: number): number }) => Array.from({ length: n }, (_, i) => page.legacyHash(i));
          expect(legacy(fromScan)).toEqual(legacy(fromEntries));
          const all = Uint32Array.from({ length: n }, (_, i) => i);
          expect(fromScan.render('model-é"1', all, n).equals(fromEntries.render('model-é"1', all, n))).toBe(true);
          const some = all.filter((i) => ((mask >>> i % 31) & 1) === 1);
          expect(fromScan.render('m', some, some.length).equals(fromEntries.render('m', some, some.length))).toBe(true);
        },
      ),
      { numRuns: RUNS, seed: Number(process.env.MLS_PROPERTY_SEED ?? 20240502) },
    );
    console.log(`scan property: ${[...tally].map(([k, v]) => `${k}: ${v.scanned} scanned, ${v.parsedOnly} parsed only, ${v.refused} refused`).join('; ')}`);
    expect(tally.get('well-formed')!.scanned).toBeGreaterThan(RUNS / 10);
    expect(tally.get('arbitrary')!.scanned).toBeGreaterThan(0);
    // valid JSON with odd bytes and escapes is read by the scanner; duplicate keys, a BOM or escaped keys are left to the parser
    expect(tally.get('bytes')!.scanned).toBe(tally.get('bytes')!.scanned + tally.get('bytes')!.parsedOnly);
    expect(tally.get('bytes')!.scanned).toBeGreaterThan(RUNS / 20);
    expect(tally.get('edge')!.parsedOnly).toBeGreaterThan(0);
    expect(tally.get('broken')!.scanned).toBe(0);
    // an entry off the spec is left to the plain reader, which keeps it
    expect(tally.get('off-spec entry')!.scanned).toBe(0);
    expect(tally.get('off-spec entry')!.parsedOnly).toBeGreaterThan(0);
  });
});
