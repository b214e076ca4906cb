//! Linear time shown as a ratio, not a time: on adversarial texts of n and 8n characters,
//! linear work grows about 8 times and quadratic work about 64 times, so the best of several
//! runs must grow less than a very generous bound between them.
import { expect } from 'vitest';

/** Linear time grows 8 times from n to 8n, quadratic 64 times. */
export const MAX_GROWTH = 24;

/** The best of up to `runs` timings of `f` in ms, stopping at the first under `enough`. */
function best(f: () => void, runs: number, enough = 0): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs && min >= enough; i++) {
    const t0 = performance.now();
    f();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

/** Expects `f` to take time linear in its text on `text(n)` and `text(8n)` (the long one timed up to `longRuns` times). */
export function expectLinearTime(f: (text: string) => unknown, text: (n: number) => string, n: number, longRuns = 5): void {
  const short = text(n);
  const long = text(8 * n);
  f(short); // compiled and warm
  // A floor below which the timer only measures noise.
  const tShort = Math.max(best(() => f(short), 5), 0.05);
  const tLong = best(() => f(long), longRuns, MAX_GROWTH * tShort);
  expect(tLong / tShort, `n: ${tShort.toFixed(3)} ms, 8n: ${tLong.toFixed(3)} ms`).toBeLessThan(MAX_GROWTH);
}
