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

  it('drop_oldest forgets the batches in flight and the held lines it drops, and only those', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    for (const name of ['fast', 'slow', 'holding']) s.ensureSink(name);
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [1, 2, 3].map((i) => prep(`2026-11-22T10:00:0${i}Z`, `${i}`)), { nextToken: 't' }, T);
    s.commitPage('m', cp.fetchId, T, [4, 5, 6].map((i) => prep(`2026-11-22T10:00:0${i}Z`, `${i}`)), { end: true }, T);
    s.ack('fast', 6, 6);
    s.setInflight('fast', 7, 8, 'k-fast');
    s.setInflight('slow', 1, 3, 'k1');
    s.setInflight('slow', 4, 5, 'k2');
    s.ack('holding', 1, 1, undefined, { json: '[{"group":1}]', holdSeq: 2 });
    s.setInflight('holding', 4, 6, 'k3');
    expect(Object.fromEntries(s.dropOldest(3))).toEqual({ slow: 3, holding: 2 });
    // The batch that started among the dropped rows is gone; the later one, and other sinks' batches, stay.
    expect(s.getSink('slow')!.inflightRanges.map((b) => b.key)).toEqual(['k2']);
    expect(s.getSink('holding')).toMatchObject({ cursor: 3, holdSeq: undefined, held: '[{"group":1}]', dropped: 2 });
    expect(s.getSink('holding')!.inflightRanges.map((b) => b.key)).toEqual(['k3']);
    expect(s.getSink('fast')).toMatchObject({ cursor: 6, dropped: 0, inflightRanges: [{ firstSeq: 7, lastSeq: 8, key: 'k-fast' }] });
    expect(s.removeSinksExcept(['slow', 'holding'])).toEqual(['fast']);
    s.ensureSink('fast');
    expect(s.getSink('fast')!.inflightRanges).toEqual([]);
    s.close();
  });
});
