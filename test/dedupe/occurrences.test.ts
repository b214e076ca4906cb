import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { countInPlace, type KeyCounts } from '../../src/dedupe/occurrences.js';

/** The rule written as a pure function, the reference the in-place form is checked against. */
function countOccurrence(stored: KeyCounts | undefined, fetchId: number): { counts: KeyCounts; isNew: boolean } {
  const seen = stored !== undefined && stored.fetchId === fetchId ? stored.seen + 1 : 1;
  const delivered = stored?.delivered ?? 0;
  const isNew = seen > delivered;
  return { counts: { delivered: isNew ? seen : delivered, seen, fetchId }, isNew };
}

/** Counts one entry of `fetchId` under `key` with the production (in-place) form. */
function count(store: Map<string, KeyCounts>, key: string, fetchId: number): boolean {
  let k = store.get(key);
  if (!k) store.set(key, (k = { delivered: 0, seen: 0, fetchId }));
  return countInPlace(k, fetchId);
}

/** Runs fetches of entries (keys) through occurrence counting; returns what was delivered. */
function run(fetches: string[][]): { delivered: string[]; store: Map<string, KeyCounts> } {
  const store = new Map<string, KeyCounts>();
  const delivered: string[] = [];
  fetches.forEach((entries, i) => {
    for (const key of entries) if (count(store, key, i + 1)) delivered.push(key);
  });
  return { delivered, store };
}

describe('occurrence-counted dedupe', () => {
  it('delivers both genuine twins once each and nothing again on a re-read (the worked example)', () => {
    // fetch 1 spans two pages: "a b" then "b"; fetch 2 re-reads an overlapping window "b a b c".
    const { delivered, store } = run([['a', 'b', 'b'], ['b', 'a', 'b', 'c']]);
    expect(delivered).toEqual(['a', 'b', 'b', 'c']);
    expect(store.get('b')!.delivered).toBe(2);
    expect(store.get('a')!.delivered).toBe(1);
  });

  it('a naive set of keys would lose the second twin; counts do not', () => {
    const { delivered } = run([['x', 'x']]);
    expect(delivered).toEqual(['x', 'x']);
  });

  it('a later fetch that shows a third copy delivers exactly one more', () => {
    const { delivered } = run([['t', 't'], ['t', 't', 't']]);
    expect(delivered).toEqual(['t', 't', 't']);
  });

  it('a resumed fetch (same fetch id) continues counting instead of starting over', () => {
    const store = new Map<string, KeyCounts>();
    const deliver = (key: string, fetchId: number) => count(store, key, fetchId);
    expect(deliver('k', 7)).toBe(true);
    // crash and resume the same fetch from its saved token: the next page shows a second copy
    expect(deliver('k', 7)).toBe(true);
    // a restarted window (new fetch id) re-reads both copies: nothing new
    expect(deliver('k', 8)).toBe(false);
    expect(deliver('k', 8)).toBe(false);
  });

  it('the in-place form used by the commit loop decides exactly as the pure rule', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 1, max: 4 })), { maxLength: 60 }), (steps) => {
        const pure = new Map<string, KeyCounts>();
        const mutable = new Map<string, KeyCounts>();
        for (const [key, fetchId] of steps) {
          const r = countOccurrence(pure.get(key), fetchId);
          pure.set(key, r.counts);
          let k = mutable.get(key);
          if (!k) mutable.set(key, (k = { delivered: 0, seen: 0, fetchId }));
          expect(countInPlace(k, fetchId)).toBe(r.isNew);
          expect(k).toEqual(r.counts);
        }
      }),
    );
  });
});
