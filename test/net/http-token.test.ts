//! isTokenRange answers what HTTP_TOKEN answers for the same slice.
import { describe, expect, it } from 'vitest';
import { HTTP_TOKEN, isTokenRange } from '../../src/net/http-token.js';

describe('isTokenRange', () => {
  it('agrees with HTTP_TOKEN on every single character of Latin-1 and beyond', () => {
    for (let c = 0; c < 0x180; c++) {
      const ch = String.fromCharCode(c);
      expect(isTokenRange(`(${ch})`, 1, 2), `char ${c}`).toBe(HTTP_TOKEN.test(ch));
    }
  });

  it('reads only the range it is given', () => {
    const line = 'Content-Type: text/plain';
    expect(isTokenRange(line, 0, 12)).toBe(true);
    expect(isTokenRange(line, 0, 13)).toBe(false); // the colon
    expect(isTokenRange(line, 14, 18)).toBe(true);
    expect(isTokenRange(line, 13, 18)).toBe(false); // the space
  });

  it('refuses an empty range, as the regular expression refuses an empty name', () => {
    expect(HTTP_TOKEN.test('')).toBe(false);
    expect(isTokenRange('abc', 1, 1)).toBe(false);
    expect(isTokenRange('abc', 2, 1)).toBe(false);
  });

  it('agrees with HTTP_TOKEN on names made of token and non-token characters', () => {
    const pool = ['a', 'Z', '0', '-', '!', '~', '`', ' ', ':', '"', '(', '\t', 'é', '\u0100', '@', '['];
    let seed = 7;
    const next = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let n = 0; n < 2_000; n++) {
      let name = '';
      for (let len = 1 + (next() % 6); len > 0; len--) name += pool[next() % pool.length];
      expect(isTokenRange(`:${name}:`, 1, 1 + name.length), JSON.stringify(name)).toBe(HTTP_TOKEN.test(name));
    }
  });
});
