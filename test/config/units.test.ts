//! The scalar notations of the config file: durations, sizes, rates, start points, modes, addresses, path templates.
import { describe, expect, test } from 'vitest';
import { parseListen } from '../../src/config/index.js';
import { Fail, parseDurationValue, parseFileModeValue, parseRateLimitValue, parseSizeValue, parseStartAtValue } from '../../src/config/units.js';

const failed = (v: unknown): string => (v instanceof Fail ? v.message : `no failure: ${JSON.stringify(v)}`);

describe('durations', () => {
  test.each([
    ['250ms', 250],
    ['10s', 10_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['0s', 0],
  ])('%s = %d ms', (text, ms) => {
    expect(parseDurationValue(text)).toBe(ms);
  });

  test('a number without unit, words, and negative values are rejected with a hint', () => {
    expect(failed(parseDurationValue(10))).toBe('10 has no unit; use e.g. 500ms, 10s, 5m, 1h, 1d');
    expect(failed(parseDurationValue('10'))).toBe('"10" has no unit; use e.g. 500ms, 10s, 5m, 1h, 1d');
    expect(failed(parseDurationValue('ten seconds'))).toMatch(/is not a duration/);
    expect(failed(parseDurationValue('-1s'))).toMatch(/is negative/);
    expect(failed(parseDurationValue('0s', { min: 1 }))).toMatch(/must be longer than 0/);
  });
});

describe('sizes', () => {
  test.each([
    [1024, 1024],
    ['1024', 1024],
    ['10B', 10],
    ['1KB', 1000],
    ['1KiB', 1024],
    ['64MiB', 64 * 1024 ** 2],
    ['1.5 MB', 1_500_000],
    ['1GiB', 1024 ** 3],
    ['2gb', 2e9],
  ])('%s = %d bytes', (v, bytes) => {
    expect(parseSizeValue(v)).toBe(bytes);
  });

  test('bad sizes are rejected', () => {
    expect(failed(parseSizeValue('1 gigabyte'))).toMatch(/is not a size; use a whole number of bytes or e\.g\./);
    expect(failed(parseSizeValue(1.5))).toMatch(/not a whole number of bytes/);
    expect(failed(parseSizeValue(-1))).toMatch(/negative/);
    expect(failed(parseSizeValue(0, { min: 1 }))).toMatch(/at least 1 byte/);
  });
});

test('rate limits', () => {
  expect(parseRateLimitValue('20/s')).toEqual({ count: 20, perMs: 1000 });
  expect(parseRateLimitValue('10 / 30s')).toEqual({ count: 10, perMs: 30_000 });
  expect(parseRateLimitValue('none')).toBeNull();
  expect(parseRateLimitValue('0')).toBeNull();
  expect(failed(parseRateLimitValue('0/s'))).toMatch(/allows no requests/);
  expect(failed(parseRateLimitValue(20))).toMatch(/expected a rate such as 20\/s/);
  expect(failed(parseRateLimitValue('20/fortnight'))).toMatch(/unknown interval/);
});

test('start points', () => {
  expect(parseStartAtValue('now')).toEqual({ kind: 'now' });
  expect(parseStartAtValue('-1h')).toEqual({ kind: 'relative', ms: 3_600_000 });
  expect(parseStartAtValue('2026-01-02')).toEqual({ kind: 'absolute', ms: Date.UTC(2026, 0, 2) });
  expect(parseStartAtValue('2026-01-02T03:04:05.678+02:00')).toEqual({ kind: 'absolute', ms: Date.UTC(2026, 0, 2, 1, 4, 5, 678) });
  expect(failed(parseStartAtValue('2026-01-02T03:04:05'))).toMatch(/has no time zone; add Z/);
  expect(failed(parseStartAtValue('-soon'))).toMatch(/not a duration back from now/);
  expect(failed(parseStartAtValue('2026-13-45T00:00:00Z'))).toMatch(/is not a start point/);
});

test('file modes', () => {
  expect(parseFileModeValue('0600')).toBe(0o600);
  expect(parseFileModeValue('755')).toBe(0o755);
  expect(parseFileModeValue('0o640')).toBe(0o640);
  expect(failed(parseFileModeValue(600))).toMatch(/quoted octal string/);
  expect(failed(parseFileModeValue('0800'))).toMatch(/not an octal mode/);
});

test('listen addresses', () => {
  expect(parseListen('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
  expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
  expect(parseListen(':9464')).toEqual({ host: '', port: 9464 });
  expect(parseListen('localhost:70000')).toBeUndefined();
  expect(parseListen('9464')).toBeUndefined();
});
