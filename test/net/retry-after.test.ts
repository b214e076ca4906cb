import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/net/retry-after.js';

describe('parseRetryAfter', () => {
  const now = Date.UTC(2024, 4, 1, 12, 0, 0);
  it.each([
    ['0', 0],
    ['5', 5000],
    [' 120 ', 120_000],
    [['7', '9'], 7000],
    ['Wed, 01 May 2024 12:00:30 GMT', 30_000],
    ['Wed, 01 May 2024 11:00:00 GMT', 0],
  ] as const)('reads %j', (value, expected) => {
    expect(parseRetryAfter(value as string | string[], now)).toBe(expected);
  });

  // delay-seconds is digits only (RFC 9110): a fraction is neither form, and the caller's own backoff applies.
  it.each([undefined, '', '-5', '1.5', '2.5', 'soon', '5s', '99999999999999999999'])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
