//! Small seeded pseudo-random generators, so that a simulator started with the same seed
//! produces the same entries, delays and faults on every run.

/** A generator of uniform numbers in [0, 1), with a 32-bit integer variant. */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform unsigned 32-bit integer. */
  nextU32(): number;
  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
}

/** mulberry32: fast, 32 bits of state, good enough for test data. */
export class Mulberry32 implements Prng {
  constructor(private state: number) {
    this.state = state >>> 0;
  }

  /** Starts the draws again from `seed`. */
  reseed(seed: number): void {
    this.state = seed >>> 0;
  }

  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  next(): number {
    return this.nextU32() / 4_294_967_296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
}

/** A {@link Mulberry32} generator started from `seed`. */
export function mulberry32(seed: number): Prng {
  return new Mulberry32(seed);
}

/** Mixes several integers into one 32-bit seed (murmur3 finalizer per step). */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h ^= p >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** Hashes a string to 32 bits (FNV-1a), to derive per-model seeds from model ids. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
