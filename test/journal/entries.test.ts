//! The journal: seqs never go backwards, reads across pages and inside them, slices cut by
//! count and bytes, and rows of the first schema read next to new ones.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StateStore } from '../../src/journal/store.js';
import { StateReader } from '../../src/journal/reader.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { entryToNdjson } from '../../src/records/ndjson.js';
import { T, prep } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('journal entries', () => {
  it('seq never goes backwards, even after the journal was emptied and reopened', () => {
    const path = join(dir, 'state.db');
    let s = StateStore.open(path);
    s.ensureCheckpoint('m', T);
    s.ensureSink('a');
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:01Z', '1')], { end: true }, T);
    s.ack('a', 1, 1);
    s.trimJournal();
    s.close();
    s = StateStore.open(path);
    const cp2 = s.beginWindow('m', T, T + 20_000);
    const r = s.commitPage('m', cp2.fetchId, T, [prep('2026-11-22T10:00:11Z', '2')], { end: true }, T);
    expect(r.firstSeq).toBe(2);
    s.close();
  });

  it('reads the same from pages kept in memory as from the file: whole, from inside a page, and where memory ends', () => {
    const path = join(dir, 'state.db');
    let s = StateStore.open(path);
    s.ensureCheckpoint('m', T);
    s.ensureSink('a');
    const cp = s.beginWindow('m', T, T + 60_000);
    // five rows of 1, 2, 3, 4 and 5 entries: seqs 1, 2–3, 4–6, 7–10, 11–15
    for (let p = 1; p <= 5; p++) {
      const page = Array.from({ length: p }, (_, i) => prep(`2026-11-22T10:00:${String(p * 10 + i).padStart(2, '0')}Z`, `p${p}e${i}`));
      s.commitPage('m', cp.fetchId, T, page, p < 5 ? { nextToken: `t${p}` } : { end: true }, T);
    }
    const logs = (x: StateStore, after: number, limit = 100) => x.readAfter(after, limit).map((e) => `${e.seq}:${e.log}`);
    const all = logs(s, 0);
    expect(all).toHaveLength(15);
    const fromMemory = Array.from({ length: 16 }, (_, after) => [logs(s, after), logs(s, after, 3), s.readRange(after, 12).map((e) => e.seq)]);
    s.close();
    // reopened: nothing in memory, every read from the file
    s = StateStore.open(path);
    const fromFile = Array.from({ length: 16 }, (_, after) => [logs(s, after), logs(s, after, 3), s.readRange(after, 12).map((e) => e.seq)]);
    expect(fromFile).toEqual(fromMemory);
    expect(fromFile[0]![0]).toEqual(all);
    s.close();
    // only the first two rows in memory: the read goes on from the file where they end
    s = StateStore.open(path);
    s.readRange(1, 3);
    expect(logs(s, 0)).toEqual(all);
    expect(logs(s, 1, 5)).toEqual(all.slice(1, 6));
    // rows deleted once every sink passed them are not read from memory either
    s.ack('a', 6, 6);
    s.trimJournal();
    expect(logs(s, 0).map((l) => l.split(':')[0])).toEqual(['7', '8', '9', '10', '11', '12', '13', '14', '15']);
    s.close();
  });

  it('seq never goes backwards after drop_oldest emptied the journal, nor for a read-only reader', () => {
    const path = join(dir, 'state.db');
    let s = StateStore.open(path);
    s.ensureCheckpoint('m', T);
    s.ensureSink('slow');
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:01Z', '1'), prep('2026-11-22T10:00:02Z', '2')], { nextToken: 'n' }, T);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:03Z', '3')], { end: true }, T);
    expect(s.dropOldest(3).get('slow')).toBe(3);
    expect(s.journalSize().entries).toBe(0);
    s.close();
    const reader = StateReader.open(path);
    expect(reader.lastSeq()).toBe(3);
    reader.close();
    s = StateStore.open(path);
    expect(s.lastSeq()).toBe(3);
    const cp2 = s.beginWindow('m', T, T + 20_000);
    expect(s.commitPage('m', cp2.fetchId, T, [prep('2026-11-22T10:00:11Z', '4')], { end: true }, T).firstSeq).toBe(4);
    s.close();
  });

  it('reads across many small pages, from any seq, and ranges inside pages', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    const cp = s.beginWindow('m', T, T + 1_000_000);
    for (let i = 0; i < 150; i++) {
      const page = [prep(new Date(T + i * 10).toISOString(), `a${i}`), prep(new Date(T + i * 10 + 1).toISOString(), `b${i}`)];
      s.commitPage('m', cp.fetchId, T, page, { nextToken: `t${i}` }, T);
    }
    expect(s.lastSeq()).toBe(300);
    const all = s.readAfter(0, 1_000);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(s.readAfter(151, 5).map((e) => e.log)).toEqual(['b75', 'a76', 'b76', 'a77', 'b77']);
    expect(s.readRange(199, 202).map((e) => e.seq)).toEqual([199, 200, 201, 202]);
    expect(s.readAfter(300, 10)).toEqual([]);
    s.close();
  });

  it('cuts slices by entry count and by the bytes of their lines, never returning nothing', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    const cp = s.beginWindow('m', T, T + 1_000_000);
    for (let i = 0; i < 3; i++) {
      const page = [0, 1, 2, 3].map((j) => prep(new Date(T + i * 10 + j).toISOString(), `p${i}e${j}`));
      s.commitPage('m', cp.fetchId, T, page, { nextToken: `t${i}` }, T);
    }
    const line = entryToNdjson(s.readRange(1, 1)[0]!).length;
    const seqs = (slices: ReturnType<StateStore['slicesAfter']>) => slices.flatMap((x) => Array.from({ length: x.to - x.from }, (_, k) => x.page.firstSeq + x.from + k));
    expect(seqs(s.slicesAfter(0, 100))).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(seqs(s.slicesAfter(2, 5))).toEqual([3, 4, 5, 6, 7]);
    expect(seqs(s.slicesAfter(2, 100, line * 3))).toEqual([3, 4, 5]);
    expect(seqs(s.slicesAfter(2, 100, line * 3 - 1))).toEqual([3, 4]);
    expect(seqs(s.slicesAfter(5, 100, 1))).toEqual([6]);
    expect(seqs(s.slicesOfRange(4, 9))).toEqual([4, 5, 6, 7, 8, 9]);
    // the slices' bytes are exactly the lines of their entries
    const slices = s.slicesAfter(2, 7);
    expect(Buffer.concat(slices.map((x) => x.page.lines(x.from, x.to))).toString()).toBe(s.readAfter(2, 7).map(entryToNdjson).join(''));
    s.close();
  });

  it('reads journal rows written by the first schema (JSON arrays) after the upgrade, next to new rows', () => {
    const path = join(dir, 'state.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec(MIGRATIONS[0]!.sql);
    db.pragma('user_version = 1');
    const old = [
      ['2026-11-22T10:00:01Z', '1795341601000000000', 'stdout', 'old "one"'],
      ['2026-11-22T10:00:02.5Z', '1795341602500000000', 'stderr', 'old\ntwo'],
    ];
    db.prepare('INSERT INTO journal (first_seq, last_seq, model_id, count, bytes, fetched_ms, entries) VALUES (1, 2, ?, 2, 100, ?, ?)').run('m', T, JSON.stringify(old));
    db.prepare("INSERT INTO meta (key, value) VALUES ('last_seq', '2')").run();
    db.close();

    const s = StateStore.open(path);
    s.ensureCheckpoint('m', T);
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:03Z', 'new')], { end: true }, T);
    s.close();
    const again = StateStore.open(path);
    const all = again.readAfter(0, 10);
    expect(all.map((e) => [e.seq, e.time, e.timeNs, e.stream, e.log, e.fetchedAtMs])).toEqual([
      [1, '2026-11-22T10:00:01Z', 1795341601000000000n, 'stdout', 'old "one"', T],
      [2, '2026-11-22T10:00:02.5Z', 1795341602500000000n, 'stderr', 'old\ntwo', T],
      [3, '2026-11-22T10:00:03Z', 1795341603000000000n, 'stdout', 'new', T],
    ]);
    const [first] = again.slicesAfter(0, 10);
    expect(first!.page.bytes.toString()).toBe(all.slice(0, 2).map(entryToNdjson).join(''));
    again.close();
  });
});
