//! Exact times (ns since the epoch, in a BigInt64Array) compared as pairs of 32-bit words: a
//! BigInt read out of a typed array is an object on the heap unless the optimizing compiler
//! lowers it, and the per-line paths compare times for every line.

/** Which 32-bit word of a 64-bit integer holds its low half on this machine. */
export const LOW = new Int32Array(BigInt64Array.of(1n).buffer)[0] === 1 ? 0 : 1;
/** Which holds its high half (signed). */
export const HIGH = 1 - LOW;

/** The times of `times` as 32-bit words: time i is words [2i + LOW] (unsigned) and [2i + HIGH] (signed). */
export function timeWords(times: BigInt64Array): Int32Array {
  return new Int32Array(times.buffer, times.byteOffset, times.length * 2);
}

/** The order of time `a` of `wa` and time `b` of `wb` (words of {@link timeWords}): negative, zero or positive. */
export function compareTimeWords(wa: Int32Array, a: number, wb: Int32Array, b: number): number {
  const high = wa[2 * a + HIGH]! - wb[2 * b + HIGH]!;
  if (high !== 0) return high;
  return (wa[2 * a + LOW]! >>> 0) - (wb[2 * b + LOW]! >>> 0);
}

/** Copies time `from` of `source` to time `to` of `target` (words of {@link timeWords}). */
export function copyTimeWords(source: Int32Array, from: number, target: Int32Array, to: number): void {
  target[2 * to + LOW] = source[2 * from + LOW]!;
  target[2 * to + HIGH] = source[2 * from + HIGH]!;
}
