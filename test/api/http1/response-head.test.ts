//! readResponseHead: a response head is read into its status, version and fields, with
//! `end` exactly after the blank line; it is undefined while incomplete, and refused with
//! MLS_HTTP_BAD_RESPONSE when malformed or larger than MAX_HEAD_BYTES.
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../../src/api/http1/errors.js';
import { MAX_HEAD_BYTES, readResponseHead, type ResponseHead } from '../../../src/api/http1/response-head.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

/** Reads a head that must be complete. */
function read(text: string | Buffer, start = 0): ResponseHead {
  const head = readResponseHead(typeof text === 'string' ? bytes(text) : text, start);
  if (head === undefined) throw new Error('the head was read as incomplete');
  return head;
}

/** Asserts that reading the head throws MLS_HTTP_BAD_RESPONSE. */
function refused(text: string | Buffer, start = 0): TransportError {
  let caught: unknown;
  try {
    readResponseHead(typeof text === 'string' ? bytes(text) : text, start);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TransportError);
  expect((caught as TransportError).code).toBe('MLS_HTTP_BAD_RESPONSE');
  return caught as TransportError;
}

const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type:  text/plain \t\r\nX-Empty:\r\nCONTENT-LENGTH:\t5\r\nx-tab-inside: a\tb\r\n\r\n';
const HEADERS = { 'content-type': 'text/plain', 'x-empty': '', 'content-length': '5', 'x-tab-inside': 'a\tb' };

describe('readResponseHead on a complete head', () => {
  it('reads the status, the version, lower-cased names and values without surrounding spaces and tabs', () => {
    expect(read(HEAD)).toEqual({ status: 200, minorVersion: 1, headers: HEADERS, end: HEAD.length });
  });

  it('reads HTTP/1.0 as minor version 0', () => {
    expect(read('HTTP/1.0 404 Not Found\r\n\r\n')).toEqual({ status: 404, minorVersion: 0, headers: {}, end: 26 });
  });

  it('reads every status from 100 to 999', () => {
    expect(read('HTTP/1.1 100 Continue\r\n\r\n').status).toBe(100);
    expect(read('HTTP/1.1 999 Odd\r\n\r\n').status).toBe(999);
  });

  it('ends exactly after the blank line and leaves the body bytes after it', () => {
    const buf = bytes(`${HEAD}hello`);
    const head = read(buf);
    expect(head.end).toBe(HEAD.length);
    expect(buf.subarray(head.end).toString('latin1')).toBe('hello');
  });

  it('reads a head that starts in the middle of a buffer, with `end` counted in that buffer', () => {
    const before = 'the end of an earlier body';
    const buf = bytes(`${before}${HEAD}hello`);
    expect(read(buf, before.length)).toEqual({ status: 200, minorVersion: 1, headers: HEADERS, end: before.length + HEAD.length });
    expect(buf.subarray(before.length + HEAD.length).toString('latin1')).toBe('hello');
  });

  it('does not see the bytes before `start`', () => {
    // A blank line before `start` must not end the head early.
    const before = 'HTTP/1.1 500 Old\r\n\r\n';
    expect(read(`${before}HTTP/1.1 201 Created\r\nA: b\r\n\r\n`, before.length)).toEqual({
      status: 201,
      minorVersion: 1,
      headers: { a: 'b' },
      end: before.length + 30,
    });
  });

  it('keeps a latin-1 byte 0xA0 at either end of a value (it is not white space here)', () => {
    const buf = Buffer.concat([bytes('HTTP/1.1 200 OK\r\nX-Nbsp: '), Buffer.from([0xa0, 0x78, 0xa0]), bytes(' \t\r\n\r\n')]);
    expect(read(buf).headers).toEqual({ 'x-nbsp': '\u00a0x\u00a0' });
  });

  it('keeps other bytes over 0x7F in a value', () => {
    const buf = Buffer.concat([bytes('HTTP/1.1 200 OK\r\nX-High: '), Buffer.from([0x80, 0xff, 0xc3, 0xa9]), bytes('\r\n\r\n')]);
    expect(read(buf).headers['x-high']).toBe('\u0080\u00ff\u00c3\u00a9');
  });
});

describe('readResponseHead on an incomplete head', () => {
  it.each([
    ['CRLF', HEAD],
    ['bare LF', 'HTTP/1.1 200 OK\nA: b\n\n'],
    ['mixed line ends', 'HTTP/1.1 200 OK\r\nA: b\n\r\n'],
    ['a fold', 'HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n'],
  ])('returns undefined for every proper prefix of a head with %s', (_, head) => {
    const buf = bytes(head);
    for (let n = 0; n < buf.length; n++) expect(readResponseHead(buf.subarray(0, n), 0), `prefix of ${n} bytes`).toBeUndefined();
    expect(read(buf).end).toBe(buf.length);
  });

  it('returns undefined for every proper prefix of a head that starts in the middle of a buffer', () => {
    const buf = bytes(`0123456789${HEAD}`);
    for (let n = 10; n < buf.length; n++) expect(readResponseHead(buf.subarray(0, n), 10), `prefix of ${n} bytes`).toBeUndefined();
    expect(read(buf, 10).end).toBe(buf.length);
  });

  it('returns undefined when nothing is left after `start`', () => {
    expect(readResponseHead(bytes(HEAD), HEAD.length)).toBeUndefined();
  });
});

describe('readResponseHead on the lenient forms', () => {
  it('accepts bare LF line ends', () => {
    const head = 'HTTP/1.1 204 No Content\nA: b\nC:  d \n\n';
    expect(read(`${head}body`)).toEqual({ status: 204, minorVersion: 1, headers: { a: 'b', c: 'd' }, end: head.length });
  });

  it.each([
    ['CRLF then LF', 'HTTP/1.1 200 OK\r\nA: b\r\n\n', 24],
    ['LF then CRLF', 'HTTP/1.1 200 OK\r\nA: b\n\r\n', 24],
  ])('accepts a blank line of %s', (_, head, end) => {
    expect(read(`${head}xyz`)).toEqual({ status: 200, minorVersion: 1, headers: { a: 'b' }, end });
  });

  it.each([
    ['CRLF', 'HTTP/1.1 200 OK\r\nA: b\r\n\r\n'],
    ['LF', 'HTTP/1.1 200 OK\nA: b\n\n'],
    ['CRLF then LF', 'HTTP/1.1 200 OK\r\nA: b\r\n\n'],
    ['LF then CRLF', 'HTTP/1.1 200 OK\r\nA: b\n\r\n'],
  ])('ends at the first blank line (%s) when the body behind it holds blank lines of every form', (_, head) => {
    const body = 'x\n\ny\r\n\r\nz\r\n\nw\n\r\n'.repeat(50);
    expect(read(`${head}${body}`)).toEqual({ ...read(head), end: head.length });
    expect(read(`${body}${head}${body}`, body.length)).toEqual({ ...read(head), end: body.length + head.length });
  });

  it.each([
    ['no reason phrase', 'HTTP/1.1 200\r\n\r\n'],
    ['an empty reason phrase', 'HTTP/1.1 200 \r\n\r\n'],
    ['a tab before the reason', 'HTTP/1.1 200\tOK\r\n\r\n'],
  ])('accepts a status line with %s', (_, head) => {
    expect(read(head)).toEqual({ status: 200, minorVersion: 1, headers: {}, end: head.length });
  });

  it('joins repeated fields with ", " in the order they came, whatever their case', () => {
    expect(read('HTTP/1.1 200 OK\r\nVary: a\r\nX: 1\r\nvary: b\r\nVARY:c \r\n\r\n').headers).toEqual({ vary: 'a, b, c', x: '1' });
  });

  it('keeps an empty repeated value as an empty member', () => {
    expect(read('HTTP/1.1 200 OK\r\nA: x\r\nA:\r\n\r\n').headers).toEqual({ a: 'x, ' });
  });

  it('appends an obs-fold continuation to the field before it with one space', () => {
    expect(read('HTTP/1.1 200 OK\r\nX-Long: one\r\n   two  \r\n\tthree\r\nY: z\r\n\r\n').headers).toEqual({ 'x-long': 'one two three', y: 'z' });
  });

  it('appends a fold to the joined value of a repeated field', () => {
    expect(read('HTTP/1.1 200 OK\r\nA: 1\r\na: 2\n 3\n\n').headers).toEqual({ a: '1, 2 3' });
  });

  it('refuses a fold before any field', () => {
    refused('HTTP/1.1 200 OK\r\n folded: x\r\n\r\n');
    refused('HTTP/1.1 200 OK\r\n\tx\r\nA: b\r\n\r\n');
  });
});

describe('readResponseHead refuses', () => {
  it.each([
    'HTTP/2 200 OK',
    'HTTP/2.0 200 OK',
    'HTTP/1.2 200 OK',
    'HTTP/1 200 OK',
    'http/1.1 200 OK',
    'HTTP/1.1 20',
    'HTTP/1.1 20 OK',
    'HTTP/1.1 099',
    'HTTP/1.1 099 Low',
    'HTTP/1.1 2000',
    'HTTP/1.1 200OK',
    'HTTP/1.1  200 OK',
    'HTTP/1.1 20x OK',
    ' HTTP/1.1 200 OK',
    'HTTP/1.1 200 O\rK',
    'ICY 200 OK',
    'garbage',
    '',
  ])('the status line %j', (line) => {
    const err = refused(`${line}\r\nA: b\r\n\r\n`);
    expect(err.message).toMatch(/^the response is not valid HTTP\/1\.1: the status line is /);
  });

  it('a head that starts with a blank line', () => {
    refused('\r\nHTTP/1.1 200 OK\r\n\r\n');
  });

  it.each([
    ['a space in the name', 'Bad Name: x'],
    ['a space before the colon', 'Name : x'],
    ['an empty name', ': x'],
    ['no colon', 'NoColon'],
    ['a separator in the name', '(x): y'],
    ['a slash in the name', 'a/b: c'],
    ['a byte over 0x7F in the name', 'N\u00e9: x'],
  ])('a field line with %s', (_, line) => {
    refused(`HTTP/1.1 200 OK\r\nA: b\r\n${line}\r\n\r\n`);
  });

  it.each([
    ['\\x01', 'b\x01c'],
    ['\\x00', '\x00'],
    ['\\x1f', 'x\x1f'],
    ['DEL', 'b\x7f'],
    ['a bare CR', 'b\rc'],
    ['a CR before the CRLF', 'b\r'],
  ])('a value with %s', (_, value) => {
    const err = refused(`HTTP/1.1 200 OK\r\nA: ${value}\r\n\r\n`);
    expect(err.message).toBe('the response is not valid HTTP/1.1: a control character in the value of A');
  });

  it('a fold with a control character', () => {
    const err = refused('HTTP/1.1 200 OK\r\nA: b\r\n c\x01\r\n\r\n');
    expect(err.message).toBe('the response is not valid HTTP/1.1: a control character in the value of a');
  });
});

describe('readResponseHead and MAX_HEAD_BYTES', () => {
  const STATUS = 'HTTP/1.1 200 OK\r\nX: ';
  /** The start of a head of exactly `n` bytes, without a blank line anywhere. */
  const unfinished = (n: number): string => STATUS + 'a'.repeat(n - STATUS.length);

  it('is 16 KiB', () => {
    expect(MAX_HEAD_BYTES).toBe(16384);
  });

  it('waits for an unfinished head of MAX_HEAD_BYTES bytes', () => {
    expect(readResponseHead(bytes(unfinished(MAX_HEAD_BYTES)), 0)).toBeUndefined();
  });

  it('refuses an unfinished head over MAX_HEAD_BYTES bytes', () => {
    const err = refused(unfinished(MAX_HEAD_BYTES + 1));
    expect(err.message).toBe('the response is not valid HTTP/1.1: a head over 16384 bytes');
    refused(unfinished(3 * MAX_HEAD_BYTES));
  });

  it('does not count the bytes before `start`', () => {
    const before = 'z'.repeat(1000);
    expect(readResponseHead(bytes(before + unfinished(MAX_HEAD_BYTES)), before.length)).toBeUndefined();
    refused(before + unfinished(MAX_HEAD_BYTES + 1), before.length);
    const head = `${unfinished(MAX_HEAD_BYTES - 4)}\r\n\r\n`;
    expect(read(before + head, before.length)).toEqual({ status: 200, minorVersion: 1, headers: { x: 'a'.repeat(MAX_HEAD_BYTES - 4 - STATUS.length) }, end: before.length + MAX_HEAD_BYTES });
  });

  it('accepts a complete head of MAX_HEAD_BYTES bytes, blank line included', () => {
    const head = `${unfinished(MAX_HEAD_BYTES - 4)}\r\n\r\n`;
    expect(head.length).toBe(MAX_HEAD_BYTES);
    expect(read(`${head}body`).end).toBe(MAX_HEAD_BYTES);
  });

  it.each([
    ['CRLF', '\r\n\r\n'],
    ['LF', '\n\n'],
  ])('refuses a head whose %s blank line comes after the limit', (_, blank) => {
    refused(`${unfinished(MAX_HEAD_BYTES + 1)}${blank}`);
    refused(`${unfinished(MAX_HEAD_BYTES + 1)}${blank}body`);
    refused(`${unfinished(20_000)}${blank}`);
  });

  it('refuses a head whose blank line comes after the limit even with a body behind it', () => {
    refused(`${unfinished(MAX_HEAD_BYTES + 100)}\r\n\r\n${'b'.repeat(MAX_HEAD_BYTES)}`);
  });
});

describe('readResponseHead on edge cases', () => {
  it('keeps fields named like Object.prototype members as plain fields', () => {
    const head = read('HTTP/1.1 200 OK\r\nConstructor: x\r\n__proto__: z\r\nHasOwnProperty: y\r\n\r\n');
    expect(Object.entries(head.headers)).toEqual([
      ['constructor', 'x'],
      ['__proto__', 'z'],
      ['hasownproperty', 'y'],
    ]);
  });

  it('gives the same answer for a head near the limit however its bytes arrive', () => {
    // The blank line starts exactly at MAX_HEAD_BYTES: accepted whole, so no prefix may be refused.
    const text = `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(MAX_HEAD_BYTES - 20)}\r\n\r\n`;
    expect(text.length).toBe(MAX_HEAD_BYTES + 4);
    expect(read(text).end).toBe(MAX_HEAD_BYTES + 4);
    for (let n = MAX_HEAD_BYTES - 2; n < text.length; n++) expect(readResponseHead(bytes(text.slice(0, n)), 0)).toBeUndefined();
    // One byte more before the blank line: refused whole and from the first prefix that shows it.
    const over = `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(MAX_HEAD_BYTES - 19)}\r\n\r\n`;
    refused(over);
    refused(over.slice(0, MAX_HEAD_BYTES + 1));
  });

  it('folds onto an empty value without a leading space, and ignores an empty fold line', () => {
    expect(read('HTTP/1.1 200 OK\r\nA:\r\n b\r\nC: d\r\n \r\n\r\n').headers).toEqual({ a: 'b', c: 'd' });
  });
});
