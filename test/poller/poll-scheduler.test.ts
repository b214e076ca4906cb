// The scheduler of poll cycles on virtual time: cycles start when due, in order of due time;
// a cycle's answer sets the next; a waiting entry can be moved earlier (not a running one);
// one that waits without end starts only when moved; a removed one never starts again, and
// its removal waits for the cycle running. Thousands due together start a few hundred a turn.
import { describe, expect, it } from 'vitest';
import { PollScheduler, gridTimer, pollGridMs, type Pollable } from '../../src/poller/poll-scheduler.js';
import { VirtualTime } from '../helpers/virtual-time.js';

const T0 = 1_000_000;

/** A pollable that records when its cycles start and answers with the waits it is given. */
function pollable(vt: VirtualTime, waits: Array<number | undefined>, log: Array<[string, number]>, name: string, hold?: () => Promise<void>): Pollable {
  let n = 0;
  return {
    async cycle() {
      log.push([name, vt.now()]);
      await hold?.();
      return n < waits.length ? waits[n++] : undefined;
    },
  };
}

describe('poll scheduler', () => {
  it('starts each cycle when due, in order, and waits what each cycle says', async () => {
    const vt = new VirtualTime(T0);
    const s = new PollScheduler(vt, vt.now);
    const log: Array<[string, number]> = [];
    s.add(pollable(vt, [1_000, 3_000, undefined], log, 'a'));
    s.add(pollable(vt, [2_500, Number.POSITIVE_INFINITY], log, 'b'));
    await vt.runUntil(T0 + 10_000, 1, [], () => s.running === 0);
    expect(log).toEqual([
      ['a', T0],
      ['b', T0],
      ['a', T0 + 1_000],
      ['b', T0 + 2_500],
      ['a', T0 + 4_000],
    ]);
    await s.stop();
  });

  it('moves a waiting entry earlier, never later, and not one whose cycle runs', async () => {
    const vt = new VirtualTime(T0);
    const s = new PollScheduler(vt, vt.now);
    const log: Array<[string, number]> = [];
    const h = s.add(pollable(vt, [10_000, 10_000, undefined], log, 'a'));
    await vt.runUntil(T0 + 2_000, 1, [
      { ms: T0 + 1_000, run: () => h.dueIn(500) },
      { ms: T0 + 1_200, run: () => h.dueIn(5_000) }, // later than it is due now: ignored
    ], () => s.running === 0);
    expect(log).toEqual([
      ['a', T0],
      ['a', T0 + 1_500],
    ]);
    // An entry waiting without end starts only when moved.
    const o = s.add(pollable(vt, [Number.POSITIVE_INFINITY, undefined], log, 'o'));
    await vt.runUntil(T0 + 100_000, 1, [{ ms: T0 + 70_000, run: () => o.dueIn(0) }], () => s.running === 0);
    expect(log.filter(([n]) => n === 'o')).toEqual([
      ['o', T0 + 2_000],
      ['o', T0 + 70_000],
    ]);
    await s.stop();
  });

  it('a removed entry never starts again, and its removal waits for the cycle running', async () => {
    const vt = new VirtualTime(T0);
    const s = new PollScheduler(vt, vt.now);
    const log: Array<[string, number]> = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const h = s.add(pollable(vt, [1_000, 1_000], log, 'a', () => held));
    await new Promise((r) => setTimeout(r, 5));
    expect(s.running).toBe(1);
    let removed = false;
    const removal = h.remove().then(() => (removed = true));
    h.dueIn(0); // running: nothing to move
    await new Promise((r) => setTimeout(r, 5));
    expect(removed).toBe(false);
    release();
    await removal;
    await vt.runUntil(T0 + 10_000, 1, [], () => s.running === 0);
    expect(log).toEqual([['a', T0]]);
    await s.stop();
  });

  it('starts thousands due together a few hundred per turn of the event loop', async () => {
    const vt = new VirtualTime(T0);
    const s = new PollScheduler(vt, vt.now);
    let started = 0;
    const never = new Promise<undefined>(() => {});
    for (let i = 0; i < 2_000; i++) {
      s.add({
        cycle: () => {
          started++;
          return never;
        },
      });
    }
    expect(started).toBe(0); // from the next turn
    const afterFirstTurn = await new Promise<number>((resolve) => setImmediate(() => resolve(started)));
    expect(afterFirstTurn).toBe(256);
    for (let i = 0; i < 100 && started < 2_000; i++) await new Promise((r) => setImmediate(r));
    expect(started).toBe(2_000);
    expect(s.running).toBe(2_000);
    void s.stop();
  });
});

describe('the daemon\'s grid', () => {
  it('starts the cycles due within one grid step together, at its end', async () => {
    const grid = 200;
    // Just after a grid point: both second cycles fall due within the step that follows.
    const vt = new VirtualTime(T0 + 1, grid);
    const s = new PollScheduler(vt, vt.now);
    const log: Array<[string, number]> = [];
    s.add(pollable(vt, [5, undefined], log, 'a'));
    s.add(pollable(vt, [50, undefined], log, 'b'));
    await vt.runUntil(T0 + 1_000, 1, [], () => s.running === 0);
    await s.stop();
    // Each cycle at the first grid point at or after its due time: the second ones, due 5 and
    // 50 ms after the first, together at the next.
    expect(log).toEqual([
      ['a', T0 + grid],
      ['b', T0 + grid],
      ['a', T0 + 2 * grid],
      ['b', T0 + 2 * grid],
    ]);
  });

  it('uses a tenth of the poll interval as the grid, at most a second', () => {
    expect(pollGridMs(10_000)).toBe(1_000);
    expect(pollGridMs(60_000)).toBe(1_000);
    expect(pollGridMs(1_000)).toBe(100);
    expect(pollGridMs(10)).toBe(1);
    expect(() => gridTimer(0)).toThrow(RangeError);
  });
});
