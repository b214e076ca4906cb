import { describe, expect, it } from 'vitest';
import { ReadLog } from '../../src/poller/read-log.js';

describe('read log', () => {
  it('tells how long after an entry the latest read covering it was made', () => {
    const log = new ReadLog(8);
    log.add(0, 1_000, 3_000); // read at 3 s, covering [0, 1 s]
    log.add(1_000, 2_000, 4_000);
    expect(log.missedFor(500)).toBe(2_500);
    expect(log.missedFor(1_500)).toBe(2_500);
    // Both ends are inclusive to the millisecond: 1 000.5 ms is in the first window's last millisecond, but the later read covers it too.
    expect(log.missedFor(1_000.5)).toBe(2_999.5);
    expect(log.missedFor(2_000.9)).toBe(1_999.1);
    expect(log.missedFor(2_001)).toBeUndefined();
    expect(log.missedFor(-1)).toBeUndefined();
    expect(log.maxToMs).toBe(2_000);
  });

  it('a later read over the same span gives the tighter bound', () => {
    const log = new ReadLog(8);
    log.add(0, 10_000, 12_000);
    log.add(0, 11_000, 13_000); // a sliding read over the same span
    expect(log.missedFor(5_000)).toBe(8_000);
  });

  it('merges its oldest records when full into one that claims no more than each did', () => {
    const log = new ReadLog(4);
    for (let i = 0; i < 10; i++) log.add(i * 1_000, (i + 1) * 1_000, (i + 1) * 1_000 + 2_000);
    expect(log.length).toBe(4);
    // Newest records are exact.
    expect(log.missedFor(9_500)).toBe(2_500);
    // Merged ones still bound below: every read was at least 2 s after the end of its span (less its last millisecond).
    for (let t = 0; t < 7_000; t += 250) {
      const bound = log.missedFor(t)!;
      const truth = (Math.floor(t / 1_000) + 1) * 1_000 + 2_000 - t;
      expect(bound).toBeGreaterThanOrEqual(1_999);
      expect(bound).toBeLessThanOrEqual(truth);
    }
  });

  it('never claims a gap between records it merges', () => {
    const log = new ReadLog(2);
    log.add(0, 1_000, 3_000);
    log.add(5_000, 6_000, 8_000);
    log.add(6_000, 7_000, 9_000);
    expect(log.missedFor(3_000)).toBeUndefined();
    expect(log.missedFor(500)).toBeUndefined(); // the oldest record went, rather than be merged over the gap
    expect(log.missedFor(5_500)).toBe(2_500);
  });

  it('drops records that end before a time', () => {
    const log = new ReadLog(8);
    log.add(0, 1_000, 3_000);
    log.add(1_000, 2_000, 4_000);
    log.trimBefore(1_500);
    expect(log.length).toBe(1);
    expect(log.missedFor(500)).toBeUndefined();
    expect(log.missedFor(1_500)).toBe(2_500);
  });
});
