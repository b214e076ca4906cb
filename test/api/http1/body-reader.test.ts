//! BodyReader: a body framed by a length, by the connection closing, or by chunked transfer
//! coding is delivered byte for byte however the bytes are split, and the offset it returns
//! is exactly where the body ended; a malformed chunked body is refused with
//! MLS_HTTP_BAD_RESPONSE.
import { describe, expect, it } from 'vitest';
import { BodyReader, type Framing } from '../../../src/api/http1/body-reader.js';
import { TransportError } from '../../../src/api/http1/errors.js';
import { MAX_HEAD_BYTES } from '../../../src/api/http1/response-head.js';
import { mulberry32 } from '../../../src/simulator/prng.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

/** What a reader delivered and where its body ended. */
interface Outcome {
  data: string;
  /** Offset in the whole input after the body, or undefined when it did not end. */
  end: number | undefined;
  done: boolean;
}

/**
 * Feeds `input` cut at `cuts` (increasing offsets inside it). With `views`, each feed is a
 * growing prefix of `input` read from the previous cut, so offsets are offsets in `input`;
 * otherwise each piece is a separate copy fed from 0. Stops feeding once the body ended.
 */
function feedCuts(framing: Framing, input: Buffer, cuts: readonly number[], views: boolean): Outcome {
  const reader = new BodyReader(framing);
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer): void => {
    chunks.push(Buffer.from(chunk));
  };
  let end: number | undefined;
  let from = 0;
  for (const to of [...cuts, input.length]) {
    if (reader.done) break;
    const at = views ? reader.feed(input.subarray(0, to), from, onData) : from + reader.feed(Buffer.from(input.subarray(from, to)), 0, onData);
    if (reader.done) end = at;
    else expect(at).toBe(to);
    from = to;
  }
  return { data: Buffer.concat(chunks).toString('latin1'), end, done: reader.done };
}

/** Feeds `input` whole. */
const feedWhole = (framing: Framing, input: string | Buffer): Outcome => feedCuts(framing, typeof input === 'string' ? bytes(input) : input, [], true);

/** Asserts that feeding `input` (cut at `cuts`) throws MLS_HTTP_BAD_RESPONSE. */
function refused(input: string | Buffer, cuts: readonly number[] = []): TransportError {
  let caught: unknown;
  try {
    feedCuts({ kind: 'chunked' }, typeof input === 'string' ? bytes(input) : input, cuts, true);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TransportError);
  expect((caught as TransportError).code).toBe('MLS_HTTP_BAD_RESPONSE');
  return caught as TransportError;
}

const CHUNKED: Framing = { kind: 'chunked' };

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

describe('BodyReader refuses a chunked body', () => {
  it.each([
    ['a letter that is not hex', 'g\r\nabc\r\n0\r\n\r\n'],
    ['hex after a letter', 'x5\r\nhello\r\n0\r\n\r\n'],
    ['a 0x prefix', '0x5\r\nhello\r\n0\r\n\r\n'],
    ['a sign', '-5\r\nhello\r\n0\r\n\r\n'],
    ['a space before it', ' 5\r\nhello\r\n0\r\n\r\n'],
    ['a space inside it', '1 0\r\n0123456789abcdef\r\n0\r\n\r\n'],
    ['no digits', '\r\n'],
    ['no digits before an extension', ';ext\r\n'],
    ['13 digits', '1000000000000\r\n'],
    ['a non-hex last size', '5\r\nhello\r\nz\r\n\r\n'],
  ])('with a size of %s', (_, input) => {
    const err = refused(input);
    expect(err.message).toMatch(/^the response is not valid HTTP\/1\.1: the chunk size /);
  });

  it('with a size line over 1024 characters', () => {
    const err = refused(`5;${'x'.repeat(1100)}\r\nhello\r\n0\r\n\r\n`);
    expect(err.message).toBe('the response is not valid HTTP/1.1: a chunk-size line over 1024 bytes');
  });

  it('with a size line that goes on past 1024 characters without ending', () => {
    refused(`5;${'x'.repeat(1023)}`);
  });

  it('with a size line over 1024 characters that came in pieces', () => {
    refused(`5;${'x'.repeat(1100)}\r\nhello\r\n0\r\n\r\n`, [300, 600, 900]);
  });

  it('but accepts a size line of 1024 characters', () => {
    const line = `5;${'x'.repeat(1022)}`;
    expect(line.length).toBe(1024);
    const body = `${line}\r\nhello\r\n0\r\n\r\n`;
    expect(feedWhole(CHUNKED, body)).toEqual({ data: 'hello', end: body.length, done: true });
  });

  it.each([
    ['data longer than its size', '3\r\nabcd\r\n0\r\n\r\n'],
    ['data longer than its size, in the last byte fed', '3\r\nabcd'],
    ['a CR and then not an LF after the data', '3\r\nabc\rX\n0\r\n\r\n'],
    ['two CRs after the data', '3\r\nabc\r\r\n0\r\n\r\n'],
  ])('with %s', (_, input) => {
    const err = refused(input);
    expect(err.message).toBe('the response is not valid HTTP/1.1: chunk data longer than its size');
  });

  it('with data longer than its size, at every split', () => {
    const input = bytes('3\r\nabcd\r\n0\r\n\r\n');
    for (let k = 0; k <= input.length; k++) refused(input, [k]);
  });

  it('with trailers over MAX_HEAD_BYTES in all', () => {
    const line = `X-Pad: ${'p'.repeat(993)}\r\n`; // 1002 bytes
    const err = refused(`0\r\n${line.repeat(17)}\r\n`);
    expect(err.message).toBe(`the response is not valid HTTP/1.1: trailer fields over ${MAX_HEAD_BYTES} bytes`);
  });

  it('with one trailer field over MAX_HEAD_BYTES', () => {
    refused(`0\r\nX-Big: ${'b'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`);
  });

  it('with one trailer field that goes on past MAX_HEAD_BYTES without ending', () => {
    refused(`0\r\nX-Big: ${'b'.repeat(MAX_HEAD_BYTES)}`);
  });

  it('but accepts trailers under MAX_HEAD_BYTES in all', () => {
    const line = `X-Pad: ${'p'.repeat(993)}\r\n`;
    const body = `1\r\na\r\n0\r\n${line.repeat(15)}\r\n`;
    expect(feedWhole(CHUNKED, `${body}next`)).toEqual({ data: 'a', end: body.length, done: true });
  });
});

describe('BodyReader with generated chunked bodies', () => {
  it('round-trips 500 random bodies in random chunks fed in random pieces', () => {
    const prng = mulberry32(0x0b0d7);
    const random = (): number => prng.next();
    const int = (n: number): number => Math.floor(random() * n);
    const eol = (): string => (random() < 0.8 ? '\r\n' : '\n');
    for (let n = 0; n < 500; n++) {
      const data = Buffer.from(Array.from({ length: int(400) }, () => int(256)));
      let text = '';
      for (let at = 0; at < data.length; ) {
        const size = Math.min(1 + int(random() < 0.5 ? 8 : 200), data.length - at);
        let hex = size.toString(16);
        if (random() < 0.5) hex = hex.toUpperCase();
        if (random() < 0.1) hex = '0'.repeat(1 + int(3)) + hex;
        const ext = random() < 0.2 ? `;n${int(100)}=v${int(100)}` : '';
        text += `${hex}${ext}${eol()}${data.subarray(at, at + size).toString('latin1')}${eol()}`;
        at += size;
      }
      text += `0${random() < 0.2 ? ';last' : ''}${eol()}`;
      for (let t = int(3); t > 0; t--) text += `X-T${t}: ${int(1000)}${eol()}`;
      text += eol();
      const input = Buffer.concat([bytes(text), bytes('HTTP/1.1 200 OK\r\n')]);
      const cuts = new Set<number>();
      for (let c = int(12); c > 0; c--) cuts.add(int(input.length + 1));
      const sorted = [...cuts].sort((x, y) => x - y);
      const outcome = feedCuts(CHUNKED, input, sorted, random() < 0.5);
      expect(outcome, `case ${n}: cuts ${sorted.join(',')} of ${JSON.stringify(text)}`).toEqual({ data: data.toString('latin1'), end: text.length, done: true });
    }
  });
});

describe('BodyReader limits do not depend on how bytes arrive', () => {
  it('counts trailer lines split over reads whole', () => {
    const line = `X-Pad: ${'p'.repeat(9993)}\r\n`;
    const input = `0\r\n${line.repeat(3)}\r\n`;
    // A cut just before each line's CRLF.
    const cuts = [0, 1, 2].map((i) => 3 + i * line.length + line.length - 2);
    refused(input);
    refused(input, cuts);
  });

  it('accepts a chunk-size line of exactly the limit even when its CR and LF come in different reads', () => {
    const input = `5;${'x'.repeat(1022)}\r\nhello\r\n0\r\n\r\n`;
    expect(feedWhole(CHUNKED, input)).toEqual({ data: 'hello', end: input.length, done: true });
    expect(feedCuts(CHUNKED, bytes(input), [1025], true)).toEqual({ data: 'hello', end: input.length, done: true });
    refused(`5;${'x'.repeat(1023)}\r\nhello\r\n0\r\n\r\n`, [1026]);
  });
});
