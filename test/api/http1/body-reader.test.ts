//! BodyReader: a body framed by a length, by the connection closing, or by chunked transfer
//! coding is delivered byte for byte however the bytes are split, and the offset it returns
//! is exactly where the body ended. Malformed chunked bodies: body-reader-refusals.test.ts.
import { describe, expect, it } from 'vitest';
import { BodyReader } from '../../../src/api/http1/body-reader.js';
import { CHUNKED, bytes, feedCuts, feedWhole } from './body-reader-fixture.js';

describe('BodyReader with a Content-Length', () => {
  it('delivers exactly the body across several feeds and returns where it ended', () => {
    const reader = new BodyReader({ kind: 'length', bytes: 10 });
    const seen: string[] = [];
    const onData = (chunk: Buffer): void => {
      seen.push(chunk.toString('latin1'));
    };
    expect(reader.feed(bytes('abc'), 0, onData)).toBe(3);
    expect(reader.done).toBe(false);
    expect(reader.feed(bytes('defg'), 0, onData)).toBe(4);
    expect(reader.done).toBe(false);
    const last = bytes('hijHTTP/1.1');
    expect(reader.feed(last, 0, onData)).toBe(3);
    expect(reader.done).toBe(true);
    expect(seen).toEqual(['abc', 'defg', 'hij']);
    expect(last.subarray(3).toString('latin1')).toBe('HTTP/1.1');
  });

  it('reads from `start` and returns an offset in the buffer fed', () => {
    const reader = new BodyReader({ kind: 'length', bytes: 5 });
    const seen: string[] = [];
    expect(reader.feed(bytes('HEAD|hello|next'), 5, (c) => seen.push(c.toString('latin1')))).toBe(10);
    expect(reader.done).toBe(true);
    expect(seen).toEqual(['hello']);
  });

  it('delivers nothing for a feed with no bytes after `start`', () => {
    const reader = new BodyReader({ kind: 'length', bytes: 5 });
    const seen: Buffer[] = [];
    expect(reader.feed(bytes('abc'), 3, (c) => seen.push(c))).toBe(3);
    expect(seen).toEqual([]);
    expect(reader.done).toBe(false);
  });

  it('takes no more bytes once the body ended', () => {
    const reader = new BodyReader({ kind: 'length', bytes: 2 });
    const seen: string[] = [];
    expect(reader.feed(bytes('ab'), 0, (c) => seen.push(c.toString('latin1')))).toBe(2);
    expect(reader.feed(bytes('cd'), 0, (c) => seen.push(c.toString('latin1')))).toBe(0);
    expect(seen).toEqual(['ab']);
    expect(reader.done).toBe(true);
  });

  it('is done at once for a zero length, and consumes nothing', () => {
    const reader = new BodyReader({ kind: 'length', bytes: 0 });
    expect(reader.done).toBe(true);
    const seen: Buffer[] = [];
    expect(reader.feed(bytes('next response'), 0, (c) => seen.push(c))).toBe(0);
    expect(seen).toEqual([]);
  });

  it('is delivered whole at every split into two pieces', () => {
    const input = bytes('0123456789abcdefXYZ');
    for (let k = 0; k <= input.length; k++) {
      for (const views of [true, false]) {
        expect(feedCuts({ kind: 'length', bytes: 16 }, input, [k], views), `split at ${k}`).toEqual({ data: '0123456789abcdef', end: 16, done: true });
      }
    }
  });

  it('does not end at the close of the connection', () => {
    expect(new BodyReader({ kind: 'length', bytes: 3 }).endsAtClose()).toBe(false);
  });
});

describe('BodyReader until the connection closes', () => {
  it('delivers everything it is fed, from `start`, and never ends by itself', () => {
    const reader = new BodyReader({ kind: 'close' });
    const seen: string[] = [];
    const onData = (chunk: Buffer): void => {
      seen.push(chunk.toString('latin1'));
    };
    expect(reader.feed(bytes('HEADabc'), 4, onData)).toBe(7);
    expect(reader.feed(bytes('0\r\n\r\n'), 0, onData)).toBe(5);
    expect(reader.feed(bytes('xyz'), 3, onData)).toBe(3);
    expect(reader.feed(bytes('HTTP/1.1 200 OK\r\n\r\n'), 0, onData)).toBe(19);
    expect(seen).toEqual(['abc', '0\r\n\r\n', 'HTTP/1.1 200 OK\r\n\r\n']);
    expect(reader.done).toBe(false);
  });

  it('ends at the close of the connection', () => {
    expect(new BodyReader({ kind: 'close' }).endsAtClose()).toBe(true);
  });
});

describe('BodyReader with chunked transfer coding', () => {
  it('delivers the chunks and returns the offset right after the final CRLF', () => {
    const body = '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n';
    expect(feedWhole(CHUNKED, `${body}HTTP/1.1 200 OK`)).toEqual({ data: 'hello world', end: body.length, done: true });
  });

  it('reads from `start` and returns an offset in the buffer fed', () => {
    const reader = new BodyReader(CHUNKED);
    const seen: string[] = [];
    const buf = bytes('HEAD3\r\nabc\r\n0\r\n\r\nnext');
    expect(reader.feed(buf, 4, (c) => seen.push(c.toString('latin1')))).toBe(buf.length - 4);
    expect(seen).toEqual(['abc']);
    expect(reader.done).toBe(true);
  });

  it('is done for an empty body', () => {
    expect(feedWhole(CHUNKED, '0\r\n\r\nX')).toEqual({ data: '', end: 5, done: true });
  });

  it('is not done before the blank line after the last chunk', () => {
    for (const body of ['5\r\nhello\r\n', '5\r\nhello\r\n0\r\n', '5\r\nhello\r\n0\r\n\r', '5\r\nhello\r\n0\r\nX: y\r\n']) {
      expect(feedWhole(CHUNKED, body), JSON.stringify(body)).toEqual({ data: 'hello', end: undefined, done: false });
    }
  });

  it('ignores chunk extensions', () => {
    const body = '5;name=value\r\nhello\r\n3;a;b="x;y"\r\nabc\r\n2 \t;ext\r\nde\r\n0;last=1\r\n\r\n';
    expect(feedWhole(CHUNKED, `${body}next`)).toEqual({ data: 'helloabcde', end: body.length, done: true });
  });

  it('reads sizes in upper, lower and mixed case hex, with leading zeros', () => {
    const a = 'x'.repeat(10);
    const b = 'y'.repeat(255);
    const c = 'z'.repeat(0xabc);
    const body = `A\r\n${a}\r\nfF\r\n${b}\r\n000aBc\r\n${c}\r\n000\r\n\r\n`;
    expect(feedWhole(CHUNKED, body)).toEqual({ data: a + b + c, end: body.length, done: true });
  });

  it('reads past trailer fields until the blank line', () => {
    const body = '4\r\ndata\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n';
    expect(feedWhole(CHUNKED, `${body}HTTP/1.1 204 No Content\r\n\r\n`)).toEqual({ data: 'data', end: body.length, done: true });
  });

  it.each([
    ['everywhere', '5\nhello\n0\n\n'],
    ['after the data', '5\r\nhello\n0\r\n\r\n'],
    ['after the size', '5\nhello\r\n0\r\n\r\n'],
    ['in the trailers', '5\r\nhello\r\n0\r\nX: y\n\n'],
    ['at the very end', '5\r\nhello\r\n0\r\n\n'],
  ])('accepts bare LF line ends %s', (_, body) => {
    expect(feedWhole(CHUNKED, `${body}\r\nnext`)).toEqual({ data: 'hello', end: body.length, done: true });
  });

  it('delivers data bytes as they are, CR and LF included', () => {
    const data = '\r\n0\r\n\r\n\x00\xff';
    const body = `9\r\n${data}\r\n0\r\n\r\n`;
    expect(feedWhole(CHUNKED, body)).toEqual({ data, end: body.length, done: true });
  });

  it('takes no more bytes once the body ended', () => {
    const reader = new BodyReader(CHUNKED);
    const seen: Buffer[] = [];
    expect(reader.feed(bytes('0\r\n\r\n'), 0, (c) => seen.push(c))).toBe(5);
    expect(reader.feed(bytes('3\r\nabc\r\n'), 0, (c) => seen.push(c))).toBe(0);
    expect(seen).toEqual([]);
  });

  it('does not end at the close of the connection', () => {
    expect(new BodyReader(CHUNKED).endsAtClose()).toBe(false);
  });

  describe('split at every byte boundary', () => {
    const BODIES: [string, string, string][] = [
      ['plain', '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n', 'hello world'],
      ['extensions and upper case', '5;name=value\r\nhello\r\nA;x\r\n0123456789\r\n0;end\r\n\r\n', 'hello0123456789'],
      ['trailers', '3\r\nabc\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\n', 'abc'],
      ['bare LF', '3\nabc\n1a\nabcdefghijklmnopqrstuvwxyz\n0\nT: v\n\n', 'abcabcdefghijklmnopqrstuvwxyz'],
      ['CRLF in the data', '4\r\n\r\n\r\n\r\n0\r\n\r\n', '\r\n\r\n'],
      ['empty', '0\r\n\r\n', ''],
    ];
    const NEXT = 'HTTP/1.1 200 OK\r\n\r\n';

    it.each(BODIES)('gives the same bytes and end fed byte by byte (%s)', (_, body, data) => {
      const input = bytes(body + NEXT);
      const cuts = Array.from({ length: input.length - 1 }, (_, i) => i + 1);
      for (const views of [true, false]) expect(feedCuts(CHUNKED, input, cuts, views)).toEqual({ data, end: body.length, done: true });
    });

    it.each(BODIES)('gives the same bytes and end fed in two pieces, at every split (%s)', (_, body, data) => {
      const input = bytes(body + NEXT);
      for (let k = 0; k <= input.length; k++) {
        for (const views of [true, false]) expect(feedCuts(CHUNKED, input, [k], views), `split at ${k}`).toEqual({ data, end: body.length, done: true });
      }
    });
  });
});
