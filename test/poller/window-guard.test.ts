import { describe, expect, it } from 'vitest';
import { WindowGuard, shortenedWindow, tokenHash } from '../../src/poller/window-guard.js';

const LIMITS = { maxPages: 100, maxDurationMs: 60_000 };

describe('window guard', () => {
  it('follows new tokens and closes a cycle of any length at the token seen again', () => {
    const g = new WindowGuard(undefined, LIMITS);
    expect(g.check('A')).toEqual({ kind: 'follow', hash: tokenHash('A') });
    expect(g.check('B')).toMatchObject({ kind: 'follow' });
    expect(g.check('C')).toMatchObject({ kind: 'follow' });
    expect(g.check('B')).toEqual({ kind: 'cycle', length: 2 });
    expect(g.check('C')).toEqual({ kind: 'cycle', length: 1 });
    expect(g.check('A')).toEqual({ kind: 'cycle', length: 3 });
    expect(g.check(undefined)).toEqual({ kind: 'end' });
    expect(g.pagesRead).toBe(4);
  });

  it('remembers the tokens stored with the checkpoint', () => {
    const g = new WindowGuard([tokenHash('A'), tokenHash('B')], LIMITS);
    expect(g.pagesRead).toBe(3);
    expect(g.check('A')).toEqual({ kind: 'cycle', length: 2 });
    expect(tokenHash('A')).toMatch(/^[0-9a-f]{16}$/);
    expect(tokenHash('A')).not.toContain('A');
  });

  it('stops following at the page cap', () => {
    const g = new WindowGuard(undefined, { ...LIMITS, maxPages: 3 });
    expect(g.check('t1')).toMatchObject({ kind: 'follow' }); // page 1 read, page 2 next
    expect(g.check('t2')).toMatchObject({ kind: 'follow' }); // page 3 next
    expect(g.check('t3')).toEqual({ kind: 'limit', reason: 'max_pages' });
    // The end and a cycle are not held back by the cap.
    expect(g.check(undefined)).toEqual({ kind: 'end' });
    expect(g.check('t1')).toMatchObject({ kind: 'cycle' });
  });

  it('stops following at the time cap, not counting the time left out', () => {
    let now = 0;
    const g = new WindowGuard(undefined, { ...LIMITS, maxDurationMs: 1_000 }, () => now);
    now = 900;
    expect(g.check('t1')).toMatchObject({ kind: 'follow' });
    now = 1_500;
    g.exclude(700); // e.g. waiting for room in the journal
    expect(g.elapsedMs).toBe(800);
    expect(g.check('t2')).toMatchObject({ kind: 'follow' });
    now = 1_700;
    expect(g.check('t3')).toEqual({ kind: 'limit', reason: 'max_duration' });
  });
});

describe('shortened window', () => {
  it('halves the span, not under the shortest span, and not at all once there', () => {
    expect(shortenedWindow({ fromMs: 0, toMs: 4_000 }, 1_000)).toEqual({ fromMs: 0, toMs: 2_000 });
    expect(shortenedWindow({ fromMs: 0, toMs: 1_500 }, 1_000)).toEqual({ fromMs: 0, toMs: 1_000 });
    expect(shortenedWindow({ fromMs: 0, toMs: 1_000 }, 1_000)).toBeUndefined();
    expect(shortenedWindow({ fromMs: 10, toMs: 13 }, 1)).toEqual({ fromMs: 10, toMs: 11 });
    expect(shortenedWindow({ fromMs: 10, toMs: 11 }, 1)).toBeUndefined();
  });

  it('isolates an instant of a one-hour window in about 22 halvings', () => {
    let w: { fromMs: number; toMs: number } | undefined = { fromMs: 0, toMs: 3_600_000 };
    let n = 0;
    for (;;) {
      const next = shortenedWindow(w!, 1);
      if (!next) break;
      w = next;
      n++;
    }
    expect(w).toEqual({ fromMs: 0, toMs: 1 });
    expect(n).toBeLessThanOrEqual(22);
  });
});
