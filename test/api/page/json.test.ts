// The plain reader of a logs page: JSON.parse and the validation of a logs body; an
// off-spec entry is kept, its fields as text, with the reason.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiProtocolError } from '../../../src/api/errors.js';
import { fieldText, parseLogsBody, readJsonPage } from '../../../src/api/page/json.js';
import { protocolError } from '../helpers.js';
import { runs } from '../../helpers/long.js';

const entry = { time: '2024-05-01T12:00:00.5Z', log: 'hello', stream: 'stdout' };

describe('parseLogsBody', () => {
  it.each([
    ['absent', {}],
    ['null', { next_token: null }],
    ['empty', { next_token: '' }],
  ])('reads a %s next_token as the end', (_name, extra) => {
    expect(parseLogsBody(JSON.stringify({ status: 'success', details: [entry], ...extra }), 200)).toEqual({ entries: [entry], nextToken: undefined });
  });

  it('returns the token and copies entries without their extra fields', () => {
    const body = JSON.stringify({ status: 'success', details: [{ ...entry, pod: 'x' }, { time: 't', log: '', stream: 'stderr' }], next_token: 'abc', page: 2 });
    expect(parseLogsBody(body, 200)).toEqual({ entries: [entry, { time: 't', log: '', stream: 'stderr' }], nextToken: 'abc' });
  });

  it.each([
    ['', /empty body/],
    ['<html><body>Bad gateway</body></html>', /HTML page/],
    ['{"status":"success","details":[', /not valid JSON/],
    ['null', /not a JSON object/],
    ['"success"', /not a JSON object/],
    ['[]', /not a JSON object/],
    ['{"details":[]}', /status missing/],
    ['{"status":"error","details":"boom"}', /status "error"/],
    ['{"status":"success"}', /no "details" array/],
    ['{"status":"success","details":{}}', /no "details" array/],
    ['{"status":"success","details":[],"next_token":42}', /next_token.*number/],
    ['{"status":"success","details":[],"next_token":{}}', /next_token.*object/],
  ])('refuses %s', (body, message) => {
    const err = protocolError(() => parseLogsBody(body, 200));
    expect(err.message).toMatch(message);
    expect(err.status).toBe(200);
    expect(err.excerpt).toBe(body.slice(0, 200));
  });

  it('keeps an off-spec entry with its fields as text and the reason, beside the valid ones', () => {
    const body = JSON.stringify({
      status: 'success',
      details: [entry, null, 'a bare string', { time: 17, log: 'x', stream: 'stdout' }, { time: entry.time, log: { msg: 'hi' }, stream: 'stdout' }, { time: entry.time, log: 'y' }, { time: 'soon', log: null, stream: 'stderr' }],
    });
    const page = readJsonPage(Buffer.from(body), 200);
    expect(page.entries).toEqual([
      entry,
      { time: '', log: 'null', stream: '' },
      { time: '', log: 'a bare string', stream: '' },
      { time: '17', log: 'x', stream: 'stdout' },
      { time: entry.time, log: '{"msg":"hi"}', stream: 'stdout' },
      { time: entry.time, log: 'y', stream: '' },
      { time: 'soon', log: 'null', stream: 'stderr' },
    ]);
    const times = new BigInt64Array(7);
    // not_an_object (1), time_unparsable (2: a number, or a string that is no time, before the log), stream (3), log (4)
    expect([...page.keys(times, new Float64Array(7))!]).toEqual([0, 1, 1, 2, 4, 3, 2]);
    expect(times[4]).toBe(times[0]);
  });

  it('writes a field that is not a string as its JSON, the same whatever the stack, and a missing one as ""', () => {
    expect([fieldText(undefined), fieldText(null), fieldText(-0.5), fieldText(true), fieldText([1, { a: 'b' }])]).toEqual(['', 'null', '-0.5', 'true', '[1,{"a":"b"}]']);
    const deep = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n));
    expect(fieldText(deep(64))).toBe('['.repeat(64) + ']'.repeat(64));
    for (const n of [65, 10_000]) expect(fieldText(deep(n))).toBe('[a JSON value nested deeper than 64 levels]');
  });

  it('accepts every valid body and returns exactly its entries and token', () => {
    const arbEntry = fc.record({ time: fc.string(), log: fc.string({ unit: 'binary' }), stream: fc.constantFrom('stdout', 'stderr', '') });
    fc.assert(
      fc.property(fc.array(arbEntry, { maxLength: 20 }), fc.option(fc.string(), { nil: undefined }), (entries, token) => {
        const body = JSON.stringify({ status: 'success', details: entries, ...(token !== undefined ? { next_token: token } : {}) });
        const page = parseLogsBody(body, 200);
        expect(page.entries).toEqual(entries);
        expect(page.nextToken).toBe(token === '' ? undefined : token);
      }),
    );
  });

  it('throws nothing but a protocol error for any other input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify({ status: 'success', details: v }))), (body) => {
        try {
          parseLogsBody(body, 200);
        } catch (err) {
          expect(err).toBeInstanceOf(ApiProtocolError);
        }
      }),
      { numRuns: runs(2000) },
    );
  });
});
