//! How long the long-running checks run. `npm test` runs every test with a fifth of the
//! property tests' cases and the longest scenarios shortened; `npm run test:long`
//! (`MLS_TEST_LONG=1`, run by CI too) runs the files that import this at full length.

/** Whether this is the full-length run. */
export const LONG = process.env.MLS_TEST_LONG === '1';

/** The cases a property test runs: `full` in the long run, a fifth of them (at least 20) otherwise. */
export function runs(full: number): number {
  return LONG ? full : Math.max(20, Math.round(full / 5));
}
