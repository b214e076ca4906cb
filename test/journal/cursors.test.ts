//! Sink cursors: where a new sink starts, trimming below the slowest cursor, and
//! drop_oldest moving lagging cursors.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore } from '../../src/journal/store.js';
import { T, prep } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('cursors', () => {
  it('cursors: a new sink starts at the end; the journal is trimmed below the slowest cursor', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    expect(s.ensureSink('a').cursor).toBe(0);
    s.ensureSink('b');
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:01Z', '1'), prep('2026-11-22T10:00:02Z', '2')], { nextToken: 't' }, T);
    expect(s.ensureSink('a').cursor).toBe(0);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:03Z', '3')], { end: true }, T);
    const late = s.ensureSink('late');
    expect(late.cursor).toBe(3);
    s.ack('a', 3, 3, '{"x":1}');
    s.ack('b', 1, 1);
    // the journal is stored a committed page per row: a page goes once every sink has passed all of it
    expect(s.trimJournal()).toBe(0);
    s.ack('b', 2, 1);
    expect(s.trimJournal()).toBe(2);
    expect(s.journalSize().entries).toBe(1);
    expect(s.readAfter(2, 10).map((e) => e.log)).toEqual(['3']);
    expect(s.getSink('a')!.state).toBe('{"x":1}');
    expect(s.removeSinksExcept(['a', 'late'])).toEqual(['b']);
    expect(s.trimJournal()).toBe(1);
    s.close();
  });

  it('drop_oldest moves lagging cursors and counts what each sink lost', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    s.ensureSink('fast');
    s.ensureSink('slow');
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [1, 2].map((i) => prep(`2026-11-22T10:00:0${i}Z`, `${i}`)), { nextToken: 't' }, T);
    s.commitPage('m', cp.fetchId, T, [3, 4].map((i) => prep(`2026-11-22T10:00:0${i}Z`, `${i}`)), { end: true }, T);
    s.ack('fast', 4, 4);
    const dropped = s.dropOldest(2);
    expect(dropped.get('slow')).toBe(2);
    expect(dropped.has('fast')).toBe(false);
    expect(s.getSink('slow')!.cursor).toBe(2);
    expect(s.readAfter(s.getSink('slow')!.cursor, 10).map((e) => e.log)).toEqual(['3', '4']);
    s.close();
  });
});
