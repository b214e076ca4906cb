// The pause between retries of a failed state write: short enough that the loops resume
// within a few seconds of space returning, however long the disk was full.
import { describe, expect, it } from 'vitest';
import { isStateError, stateRetryDelay } from '../../src/journal/state-errors.js';

describe('stateRetryDelay', () => {
  it('doubles its bound from 1 s and never waits longer than the cap, however many failures', () => {
    const longest = (n: number) => stateRetryDelay(n, () => 0.999_999);
    expect([1, 2, 3].map(longest)).toEqual([1_000, 2_000, 4_000]);
    for (const n of [4, 5, 10, 100, 10_000]) expect(longest(n)).toBe(5_000);
  });

  it('waits at least 250 ms, so a loop never spins on a full disk', () => {
    for (const n of [1, 2, 50]) expect(stateRetryDelay(n, () => 0)).toBe(250);
  });
});

describe('isStateError', () => {
  it('tells SQLite errors from the rest', () => {
    expect(isStateError(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(true);
    expect(isStateError(Object.assign(new Error('no space'), { code: 'ENOSPC' }))).toBe(false);
    expect(isStateError(new Error('plain'))).toBe(false);
    expect(isStateError(undefined)).toBe(false);
  });
});
