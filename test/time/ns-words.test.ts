// Times compared as 32-bit words order as the 64-bit integers they are, whatever their sign.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareTimeWords, copyTimeWords, timeWords } from '../../src/time/ns-words.js';

describe('time words', () => {
  it('compare as the BigInts do, and copy exactly', () => {
    const time = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(0n, -1n, 1n, 2n ** 32n, 2n ** 32n - 1n, -(2n ** 32n), 1_764_000_000_000_000_000n));
    fc.assert(
      fc.property(fc.array(time, { minLength: 2, maxLength: 8 }), fc.nat(), fc.nat(), (list, x, y) => {
        // A view at an offset, as a page's slice of times is.
        const backing = new BigInt64Array(list.length + 1);
        backing.set(list, 1);
        const times = backing.subarray(1);
        const words = timeWords(times);
        const a = x % list.length;
        const b = y % list.length;
        expect(Math.sign(compareTimeWords(words, a, words, b))).toBe(list[a]! < list[b]! ? -1 : list[a]! > list[b]! ? 1 : 0);
        const target = new BigInt64Array(1);
        copyTimeWords(words, a, timeWords(target), 0);
        expect(target[0]).toBe(list[a]);
      }),
      { numRuns: 2000 },
    );
  });
});
