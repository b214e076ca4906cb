//! The generator the content renderers draw from: one module-level mulberry32, reseeded for
//! each line, rather than a generator object per line — rendering runs once per served
//! entry, and the garbage of an object per line dominated the serving cost.
import { Mulberry32 } from './prng.js';

const rng = new Mulberry32(0);

/** Starts the draws of one line (or one part of a line) from `seed`. */
export function reseed(seed: number): void {
  rng.reseed(seed);
}

/** A uniform unsigned 32-bit integer. */
export function nextU32(): number {
  return rng.nextU32();
}

/** Uniform in [0, 1). */
export function next(): number {
  return rng.next();
}

/** A uniform integer in [min, max], both inclusive. */
export function int(min: number, max: number): number {
  return rng.int(min, max);
}

/** A uniform element of a non-empty array. */
export function pick<T>(arr: readonly T[]): T {
  return arr[Math.floor(next() * arr.length)]!;
}

/** `whole.tenths`, e.g. `12.3`, from `[0, max]`. */
export function decimal(max: number): string {
  return `${int(0, max)}.${int(0, 9)}`;
}

/** `n` lowercase hex digits (n a multiple of 8), never all zero. */
export function hex(n: number): string {
  let out = '';
  for (let i = 0; i < n; i += 8) out += ((nextU32() | (i === 0 ? 1 : 0)) >>> 0).toString(16).padStart(8, '0');
  return out;
}
