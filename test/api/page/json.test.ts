// The JSON path of the page parser: JSON.parse and the full validation of a logs body.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiProtocolError } from '../../../src/api/errors.js';
import { parseLogsBody } from '../../../src/api/page/json.js';
import { protocolError } from '../helpers.js';

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
    ['{"status":"success","details":[null]}', /details\[0\] that is not an object/],
    ['{"status":"success","details":[["a"]]}', /details\[0\] that is not an object/],
    ['{"status":"success","details":[{"time":1,"log":"","stream":"stdout"}]}', /details\[0\]\.time/],
    ['{"status":"success","details":[{"time":"t","stream":"stdout"}]}', /details\[0\]\.log/],
    ['{"status":"success","details":[{"time":"t","log":"x","stream":null}]}', /details\[0\]\.stream/],
    ['{"status":"success","details":[],"next_token":42}', /next_token.*number/],
    ['{"status":"success","details":[],"next_token":{}}', /next_token.*object/],
  ])('refuses %s', (body, message) => {
    const err = protocolError(() => parseLogsBody(body, 200));
    expect(err.message).toMatch(message);
    expect(err.status).toBe(200);
    expect(err.excerpt).toBe(body.slice(0, 200));
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
      { numRuns: 2000 },
    );
  });
});
