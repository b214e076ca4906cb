import { describe, expect, it } from 'vitest';
import { OccurrenceFilter } from '../../src/cli/occurrence-filter.js';
import type { LogEntry } from '../../src/records/entry.js';
import { entryTimeNs } from '../../src/time/timestamp.js';

const entry = (time: string, log: string, stream = 'stdout'): LogEntry => ({ time, log, stream });
const ns = (time: string): bigint => entryTimeNs(time)!;
const T0 = '2026-05-01T12:00:00Z';

/** Admits every entry of one fetch of a window; returns the logs it let through. */
function fetchOnce(filter: OccurrenceFilter, entries: LogEntry[], minNs = 0n): string[] {
  filter.beginFetch();
  return entries.filter((e) => filter.admit(e, minNs, ns(T0))).map((e) => e.log);
}

describe('OccurrenceFilter', () => {
  it('prints nothing again when a window is read again', () => {
    const filter = new OccurrenceFilter();
    const page = [entry('2026-05-01T12:00:01Z', 'a'), entry('2026-05-01T12:00:02Z', 'b')];
    expect(fetchOnce(filter, page)).toEqual(['a', 'b']);
    expect(fetchOnce(filter, page)).toEqual([]);
  });

  it('prints two identical lines twice, and a third copy when a later read shows it', () => {
    const filter = new OccurrenceFilter();
    const line = entry('2026-05-01T12:00:01Z', 'retrying');
    expect(fetchOnce(filter, [line, line])).toEqual(['retrying', 'retrying']);
    expect(fetchOnce(filter, [line, line])).toEqual([]);
    expect(fetchOnce(filter, [line, line, line])).toEqual(['retrying']);
  });

  it('tells lines apart by time (as an instant), stream and text', () => {
    const filter = new OccurrenceFilter();
    expect(fetchOnce(filter, [entry('2026-05-01T12:00:01Z', 'x'), entry('2026-05-01T12:00:01Z', 'x', 'stderr'), entry('2026-05-01T12:00:02Z', 'x')])).toEqual(['x', 'x', 'x']);
    // The same instant written with an offset is the same line.
    expect(fetchOnce(filter, [entry('2026-05-01T14:00:01.000+02:00', 'x')])).toEqual([]);
  });

  it('keys long lines by their hash: equal ones once, different ones both', () => {
    const filter = new OccurrenceFilter();
    const long = 'y'.repeat(500);
    expect(fetchOnce(filter, [entry('2026-05-01T12:00:01Z', long), entry('2026-05-01T12:00:01Z', `${long}z`)])).toHaveLength(2);
    expect(fetchOnce(filter, [entry('2026-05-01T12:00:01Z', long)])).toEqual([]);
    expect(filter.size).toBe(2);
  });

  it('refuses lines before the window, keeps lines whose time cannot be read', () => {
    const filter = new OccurrenceFilter();
    const from = ns('2026-05-01T12:00:05Z');
    expect(fetchOnce(filter, [entry('2026-05-01T12:00:04Z', 'early'), entry('not a time', 'odd'), entry('2026-05-01T12:00:05Z', 'on time')], from)).toEqual(['odd', 'on time']);
    expect(fetchOnce(filter, [entry('not a time', 'odd')], from)).toEqual([]);
  });

  it('forgets lines older than the prune point (dated by the fallback when unreadable)', () => {
    const filter = new OccurrenceFilter();
    fetchOnce(filter, [entry('2026-05-01T12:00:01Z', 'old'), entry('2026-05-01T12:00:09Z', 'new'), entry('bad', 'undated')]);
    expect(filter.size).toBe(3);
    filter.prune(ns('2026-05-01T12:00:05Z'));
    expect(filter.size).toBe(1);
    // A forgotten line prints again if a read still returns it.
    expect(fetchOnce(filter, [entry('2026-05-01T12:00:01Z', 'old'), entry('2026-05-01T12:00:09Z', 'new')])).toEqual(['old']);
  });
});
