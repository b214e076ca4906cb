//! BodyReader refuses a malformed chunked body with MLS_HTTP_BAD_RESPONSE, however its
//! bytes are split, and within the limits of a size line and of trailers.
import { describe, expect, it } from 'vitest';
import { MAX_HEAD_BYTES } from '../../../src/api/http1/response-head.js';
import { mulberry32 } from '../../../src/simulator/prng.js';
import { CHUNKED, bytes, feedCuts, feedWhole, refused } from './body-reader-fixture.js';

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
