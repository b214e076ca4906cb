//! Occurrence counts of a page commit: re-reads deliver nothing new, twins are kept, keys
//! are pruned when no window can reach them, and counts written by earlier versions hold.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StateStore } from '../../src/journal/store.js';
import { legacyContentHash } from '../../src/dedupe/key.js';
import { KEYS_TRAILER, PackedBucket, bucketOf, hashWords } from '../../src/dedupe/buckets.js';
import { createPageParser } from '../../src/api/page/index.js';
import { preparePage } from '../../src/poller/prepare.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { FIXTURE_PAGE, T, prep } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('dedupe counts', () => {
  it('re-reading a window delivers nothing new; twins are kept', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    const twins = [prep('2026-11-22T10:00:01Z', 'same'), prep('2026-11-22T10:00:01Z', 'same')];
    let cp = s.beginWindow('m', T, T + 10_000);
    expect(s.commitPage('m', cp.fetchId, T, twins, { end: true }, T).appended).toBe(2);
    cp = s.beginWindow('m', T, T + 20_000);
    const again = s.commitPage('m', cp.fetchId, T, [...twins, prep('2026-11-22T10:00:15Z', 'new')], { end: true }, T);
    expect(again).toMatchObject({ appended: 1, duplicates: 2 });
    s.close();
  });

  it('prunes keys once the horizon passes them, and not before', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:01Z', 'x')], { end: true }, T);
    expect(s.pruneKeys('m', T)).toBe(0);
    expect(s.pruneKeys('m', T + 5_000)).toBe(1);
    s.close();
  });

  it('delivers an entry without a time once, whichever window returns it, and forgets it once no window can reach the last that did', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T - 60_000);
    const untimed = [
      { time: 'yesterday at noon', log: 'time does not parse', stream: 'stdout' },
      ['2026-11-22T10:00:03Z', 'stdout', 'an array, not an object'],
    ];
    const timed = [
      { time: '2026-11-22T10:00:01Z', log: 'on the spec', stream: 'stdout' },
      { time: '2026-11-22T10:00:02Z', log: null, stream: 'stderr' },
    ];
    const fetch = (fromMs: number, toMs: number, details: unknown[]) => {
      const cp = s.beginWindow('m', fromMs, toMs);
      const page = preparePage(createPageParser()(Buffer.from(JSON.stringify({ status: 'success', details })), 200), fromMs);
      return s.commitPages([{ modelId: 'm', fetchId: cp.fetchId, windowFromMs: fromMs, entries: page, next: { end: true }, fetchedMs: T }])[0]!;
    };
    expect(fetch(T, T + 10_000, [...timed, ...untimed])).toMatchObject({ appended: 4, invalid: { log_not_string: 1, time_unparsable: 1, not_an_object: 1 } });
    // Read again by windows that start elsewhere (a re-read from earlier with a late entry, a
    // window from later): nothing new but the late entry, and no off-spec entry counted again.
    const again = fetch(T - 5_000, T + 10_000, [...untimed, ...timed, { time: '2026-11-22T10:00:04Z', log: 'late', stream: 'stdout' }]);
    expect(again).toMatchObject({ appended: 1, duplicates: 4 });
    expect(again.invalid).toBeUndefined();
    expect(fetch(T + 500, T + 20_000, [...timed, ...untimed])).toMatchObject({ appended: 0, duplicates: 4 });
    expect(s.readAfter(0, 10).map((e) => [e.time, e.stream, e.log])).toEqual([
      // the entries without a time have their first window's start as their time in the journal
      ['yesterday at noon', 'stdout', 'time does not parse'],
      ['', '', '["2026-11-22T10:00:03Z","stdout","an array, not an object"]'],
      ['2026-11-22T10:00:01Z', 'stdout', 'on the spec'],
      ['2026-11-22T10:00:02Z', 'stderr', 'null'],
      ['2026-11-22T10:00:04Z', 'stdout', 'late'],
    ]);
    // The seconds of the timed entries go with the horizon; the entries without a time stay
    // while a window can reach the last one that returned them, which ended at T+20s.
    expect(s.pruneKeys('m', T + 19_000)).toBe(3);
    expect(fetch(T + 19_000, T + 30_000, untimed)).toMatchObject({ appended: 0, duplicates: 2 });
    expect(s.pruneKeys('m', T + 29_000)).toBe(0);
    expect(s.pruneKeys('m', T + 30_001)).toBe(2);
    // Forgotten: a service that still returned them would have them delivered again.
    expect(fetch(T + 30_000, T + 40_000, untimed)).toMatchObject({ appended: 2 });
    s.close();
  });

  it('keeps the key of an entry dated before its window until the horizon passes the end of the last window that returned it', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T - 3_600_000);
    // A long window [T, T+5m]: two entries inside, one an hour before it that the service returned anyway.
    const stray = prep('2026-11-22T09:00:00.5Z', 'returned with every window');
    const inside = [prep('2026-11-22T10:00:01Z', 'a'), prep('2026-11-22T10:04:00Z', 'b')];
    let cp = s.beginWindow('m', T, T + 300_000);
    expect(s.commitPage('m', cp.fetchId, T, [stray, ...inside], { end: true }, T).appended).toBe(3);
    // Watermark T+5m, lookback 10 s: the inside keys go as before; the stray's stays.
    expect(s.pruneKeys('m', T + 290_000)).toBe(2);
    cp = s.beginWindow('m', T + 290_000, T + 600_000);
    expect(s.commitPage('m', cp.fetchId, T + 290_000, [stray], { end: true }, T).appended).toBe(0);
    // Returned again by the second window: kept until lookback after that window's end.
    expect(s.pruneKeys('m', T + 590_000)).toBe(0);
    expect(s.pruneKeys('m', T + 601_000)).toBe(1);
    s.close();
  });

  it('moves the dedupe counts of a version 2 file into the rowid table and keeps deduping against them', () => {
    const path = join(dir, 'state.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec(MIGRATIONS[0]!.sql);
    db.exec(MIGRATIONS[1]!.sql);
    db.pragma('user_version = 2');
    const old = prep('2026-11-22T10:00:01.5Z', 'delivered before the upgrade');
    // A bucket as version 2 wrote it: 28-byte records keyed by the earlier hash, no trailer.
    const bucket = PackedBucket.decode(new Uint8Array(0));
    const halves = new Uint32Array(new BigInt64Array([old.timeNs]).buffer);
    const [hashLo, hashHi] = hashWords(legacyContentHash(old.entry.stream, old.entry.log));
    expect(bucket.count(bucket.find(halves[0]!, halves[1]!, hashLo!, hashHi!, 7), 7)).toBe(true);
    expect(bucket.encode().byteLength).toBe(28);
    db.prepare('INSERT INTO dedupe (model_id, bucket_ms, touched_ms, keys) VALUES (?, ?, ?, ?)').run('m', bucketOf(old.timeNs), T, bucket.encode());
    db.close();

    const s = StateStore.open(path);
    s.ensureCheckpoint('m', T);
    const cp = s.beginWindow('m', T, T + 10_000);
    const [r] = s.commitPages([{ modelId: 'm', fetchId: cp.fetchId, windowFromMs: T, entries: [old, prep('2026-11-22T10:00:01.6Z', 'new')], next: { end: true }, fetchedMs: T }]);
    expect([r!.appended, r!.duplicates]).toEqual([1, 1]);
    expect(s.readAfter(0, 10).map((e) => e.log)).toEqual(['new']);
    s.close();
    const check = new Database(path, { readonly: true });
    try {
      expect(check.pragma('user_version', { simple: true })).toBe(MIGRATIONS[MIGRATIONS.length - 1]!.version);
      const sql = (check.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'dedupe'").pluck().get() as string).toUpperCase();
      expect(sql).not.toContain('WITHOUT ROWID');
      expect(check.prepare('SELECT count(*) FROM dedupe').pluck().get()).toBe(1);
    } finally {
      check.close();
    }
  });

  it('keeps deduping against the buckets a state file of the previous version keyed by the earlier hash', () => {
    // test/fixtures/state/state-v3.db was written by the previous version (schema 3, content
    // hash cyrb53) after one fetch of FIXTURE_PAGE for model m, window [T, T + 10 s].
    const path = join(dir, 'state.db');
    copyFileSync(new URL('../fixtures/state/state-v3.db', import.meta.url), path);
    const body = (details: object[]) => Buffer.from(JSON.stringify({ status: 'success', details, next_token: null }));
    const s = StateStore.open(path);
    const fetch = (details: object[], scanned: boolean) => {
      const cp = s.beginWindow('m', T, T + 10_000);
      const bytes = body(details);
      const page = preparePage(createPageParser({ json: !scanned })(bytes, 200), T);
      return s.commitPages([{ modelId: 'm', fetchId: cp.fetchId, windowFromMs: T, entries: page, next: { end: true }, fetchedMs: T }])[0]!;
    };
    expect(s.readAfter(0, 100).map((e) => e.log)).toEqual(FIXTURE_PAGE.map((e) => e.log));
    // The same page read again, from the body's bytes and from entry objects: nothing new but
    // the line whose time does not parse. The previous version keyed it under its window's
    // start; it is keyed by its text alone now, so it comes once more after the upgrade.
    expect(fetch(FIXTURE_PAGE, true)).toMatchObject({ appended: 1, duplicates: 7 });
    expect(fetch(FIXTURE_PAGE, false)).toMatchObject({ appended: 0, duplicates: 8 });
    // A third twin and a late line in the old seconds, and a line in a second not seen before.
    const later = [
      ...FIXTURE_PAGE,
      FIXTURE_PAGE[0]!,
      { time: '2026-11-22T10:00:01.900000000Z', log: 'late line in an old second', stream: 'stdout' },
      { time: '2026-11-22T10:00:05Z', log: 'after the upgrade', stream: 'stdout' },
    ];
    expect(fetch(later, true)).toMatchObject({ appended: 3, duplicates: 8 });
    expect(fetch(later, false)).toMatchObject({ appended: 0, duplicates: 11 });
    expect(fetch(later, true)).toMatchObject({ appended: 0, duplicates: 11 });
    expect(s.readAfter(8, 100).map((e) => e.log)).toEqual([FIXTURE_PAGE[5]!.log, FIXTURE_PAGE[0]!.log, 'late line in an old second', 'after the upgrade']);
    s.close();
    const check = new Database(path, { readonly: true });
    try {
      const blobs = check.prepare('SELECT bucket_ms, keys FROM dedupe ORDER BY bucket_ms').all() as { bucket_ms: number; keys: Buffer }[];
      const trailer = (b: Buffer) => (b.byteLength % 28 === 4 ? b.readUInt32LE(b.byteLength - 4) : undefined);
      // Old seconds (and the window start, where the line with a bad time was keyed) stay as
      // they were; the new second and the line's own bucket carry the trailer of the current hash.
      expect(blobs.map((b) => [b.bucket_ms < 0 ? 'untimed' : b.bucket_ms - T, trailer(b.keys)])).toEqual([
        ['untimed', KEYS_TRAILER],
        [0, undefined],
        [1_000, undefined],
        [2_000, undefined],
        [5_000, KEYS_TRAILER],
      ]);
    } finally {
      check.close();
    }
  });
});
