//! Checkpoints: the token and the window across a reopen, the tokens followed, a window
//! cut short, and windows that return nothing (kept in memory, written together).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StateStore, type PreparedEntry } from '../../src/journal/store.js';
import { StateReader } from '../../src/journal/reader.js';
import { quietFlushDelayMs } from '../../src/journal/checkpoints.js';
import { T, prep } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('checkpoints', () => {
  it('creates the checkpoints of many new models at once, keeping those that exist', () => {
    const path = join(dir, 'state.db');
    let s = StateStore.open(path);
    s.ensureCheckpoint('old', T - 5_000, 'now');
    s.commitPage('old', 1, T, [], { end: true }, T, { fromMs: T - 5_000, toMs: T });
    const ids = Array.from({ length: 2_000 }, (_, i) => `m${i}`);
    s.ensureCheckpoints([...ids, 'old'].map((modelId, i) => ({ modelId, startMs: T + i + 0.5, startAt: i % 2 === 0 ? '-1h' : undefined })));
    // the existing model keeps its start, setting and watermark
    expect(s.getCheckpoint('old')).toMatchObject({ startMs: T - 5_000, startAt: 'now', watermarkMs: T });
    expect(s.getCheckpoint('m0')).toMatchObject({ modelId: 'm0', startMs: T, startAt: '-1h', watermarkMs: undefined, window: undefined, fetchId: 0 });
    expect(s.getCheckpoint('m1999')).toMatchObject({ startMs: T + 1_999, startAt: undefined });
    s.ensureCheckpoints([]);
    s.close();
    // written, not only cached
    s = StateStore.open(path);
    expect(s.listCheckpoints().map((c) => c.modelId).sort()).toEqual([...ids, 'old'].sort());
    expect(s.getCheckpoint('m7')).toMatchObject({ startMs: T + 7, startAt: undefined });
    s.close();
  });

  it('records the start_at settings of many models in one transaction', () => {
    const path = join(dir, 'state.db');
    let s = StateStore.open(path);
    const ids = Array.from({ length: 2_000 }, (_, i) => `m${i}`);
    s.ensureCheckpoints(ids.map((modelId) => ({ modelId, startMs: T, startAt: undefined })));
    expect(s.getCheckpoint('m5')?.startAt).toBeUndefined(); // cached before the change
    const walBefore = statSync(`${path}-wal`).size;
    s.recordStartAts(ids.map((modelId, i) => ({ modelId, startAt: i % 2 === 0 ? '-1h' : 'now' })));
    s.recordStartAts([]);
    // One commit appends a few pages to the WAL; one commit a model appended at least a page each (16 KiB).
    expect(statSync(`${path}-wal`).size - walBefore).toBeLessThan(40 * 16_384);
    expect(s.getCheckpoint('m5')).toMatchObject({ startMs: T, startAt: 'now' });
    s.close();
    s = StateStore.open(path);
    expect(s.getCheckpoint('m0')?.startAt).toBe('-1h');
    expect(s.getCheckpoint('m1999')?.startAt).toBe('now');
    s.close();
  });

  it('gives, after every kind of page, the checkpoint the file holds', () => {
    const path = join(dir, 'state.db');
    // A clock that moves at every reading: the file must hold the times the cache holds.
    let clock = T + 60_000;
    const s = StateStore.open(path, { now: () => clock++ });
    const reader = StateReader.open(path);
    const same = () => expect(s.getCheckpoint('m')).toEqual(reader.getCheckpoint('m'));
    try {
      s.ensureCheckpoint('m', T - 10_000, 'now');
      // a first window, from nothing: the watermark, the plan state and the newest entry are set
      s.commitPage('m', 1, T - 10_000, [prep('2026-11-22T10:00:00.5Z', 'a')], { end: true }, T, { fromMs: T - 10_000, toMs: T + 0.4, planStateAfter: '{"f":{"30000":1}}' });
      same();
      expect(s.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 1, fetchId: 1, planState: '{"f":{"30000":1}}', lastEntryNs: 1795341600500000000n, window: undefined });
      // a re-read of an older window: the watermark and the newest entry do not go back, the plan state stays
      s.commitPage('m', 2, T - 10_000, [prep('2026-11-22T09:59:55Z', 'b')], { end: true }, T, { fromMs: T - 10_000, toMs: T - 5_000 });
      same();
      expect(s.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 1, fetchId: 2, planState: '{"f":{"30000":1}}', lastEntryNs: 1795341600500000000n });
      // only duplicates: no entry appended; kept in memory as an empty window is, then written
      expect(s.commitPage('m', 3, T, [prep('2026-11-22T10:00:00.5Z', 'a')], { end: true }, T, { fromMs: T, toMs: T + 2_000, planStateAfter: '{"f":{"30000":2}}' }).appended).toBe(0);
      expect(s.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 2_000, fetchId: 3, planState: '{"f":{"30000":2}}', lastEntryNs: 1795341600500000000n });
      expect(reader.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 1, fetchId: 2 });
      s.flushQuiet();
      same();
      // quiet windows kept in memory, then a page: both written in its transaction
      s.commitPage('m', 4, T + 2_000, [], { end: true }, T, { fromMs: T + 2_000, toMs: T + 3_000, planStateAfter: '{"f":{"30000":3}}' });
      expect(s.getCheckpoint('m')).not.toEqual(reader.getCheckpoint('m'));
      s.commitPage('m', 5, T + 3_000, [prep('2026-11-22T10:00:03.5Z', 'c')], { end: true }, T, { fromMs: T + 3_000, toMs: T + 4_000 });
      same();
      expect(s.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 4_000, fetchId: 5, planState: '{"f":{"30000":3}}', lastEntryNs: 1795341603500000000n });
      // a window of two pages: the checkpoint is read back, the same
      s.commitPage('m', 6, T + 4_000, [prep('2026-11-22T10:00:04.5Z', 'd')], { nextToken: 't' }, T, { fromMs: T + 4_000, toMs: T + 6_000 });
      same();
      s.commitPage('m', 6, T + 4_000, [prep('2026-11-22T10:00:05.5Z', 'e')], { end: true }, T);
      same();
      expect(s.readAfter(0, 10).map((e) => e.log)).toEqual(['a', 'b', 'c', 'd', 'e']);
    } finally {
      reader.close();
      s.close();
    }
  });

  it('commits a page with its token, resumes, and moves the watermark only at the end', () => {
    const path = join(dir, 'state.db');
    let s = StateStore.open(path);
    s.ensureCheckpoint('m', T);
    let cp = s.beginWindow('m', T, T + 60_000);
    const page1 = [prep('2026-11-22T10:00:01.000000001Z', 'a'), prep('2026-11-22T10:00:02Z', 'b')];
    expect(s.commitPage('m', cp.fetchId, T, page1, { nextToken: 'tok-2' }, T).appended).toBe(2);
    s.close();

    // restart: the window and token survive
    s = StateStore.open(path);
    cp = s.getCheckpoint('m')!;
    expect(cp.window).toEqual({ fromMs: T, toMs: T + 60_000, nextToken: 'tok-2' });
    expect(cp.watermarkMs).toBeUndefined();
    const r = s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:03Z', 'c')], { end: true }, T);
    expect(r.appended).toBe(1);
    cp = s.getCheckpoint('m')!;
    expect(cp.window).toBeUndefined();
    expect(cp.watermarkMs).toBe(T + 60_000);
    expect(s.readAfter(0, 10).map((e) => e.log)).toEqual(['a', 'b', 'c']);
    expect(s.readAfter(0, 10)[0]!.timeNs).toBe(1795341601000000001n);
    s.close();
  });

  it('keeps the tokens followed in the window across a reopen, and forgets them when the window ends, restarts or begins', () => {
    const path = join(dir, 'state.db');
    let s = StateStore.open(path);
    s.ensureCheckpoint('m', T);
    let cp = s.beginWindow('m', T, T + 60_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:01Z', 'a')], { nextToken: 'A', tokenHash: 'aaaa' }, T);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:02Z', 'b')], { nextToken: 'B', tokenHash: 'bbbb' }, T);
    s.close();

    // As after a SIGKILL: the next open finds the token and both hashes.
    s = StateStore.open(path);
    cp = s.getCheckpoint('m')!;
    expect(cp.window).toEqual({ fromMs: T, toMs: T + 60_000, nextToken: 'B', tokens: ['aaaa', 'bbbb'] });
    expect(s.restartWindow('m').window!.tokens).toBeUndefined();
    s.commitPage('m', cp.fetchId + 1, T, [], { nextToken: 'A', tokenHash: 'aaaa' }, T);
    expect(s.getCheckpoint('m')!.window!.tokens).toEqual(['aaaa']);
    s.commitPage('m', cp.fetchId + 1, T, [], { end: true }, T);
    cp = s.beginWindow('m', T + 60_000, T + 120_000);
    expect(cp.window).toEqual({ fromMs: T + 60_000, toMs: T + 120_000, nextToken: undefined });
    s.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT win_tokens FROM checkpoints WHERE model_id = 'm'").pluck().get()).toBeNull();
    raw.close();
  });

  it('cuts the window in progress short: a new fetch id, no token, the shorter planned state; its re-read delivers nothing twice', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    let cp = s.beginWindow('m', T, T + 60_000, 'whole window');
    const page = [prep('2026-11-22T10:00:01Z', 'a'), prep('2026-11-22T10:00:01Z', 'a'), prep('2026-11-22T10:00:40Z', 'late')];
    expect(s.commitPage('m', cp.fetchId, T, page, { nextToken: 'A', tokenHash: 'aaaa' }, T).appended).toBe(3);
    const cut = s.shortenWindow('m', T + 30_000, 'first half');
    expect(cut.fetchId).toBe(cp.fetchId + 1);
    expect(cut.window).toEqual({ fromMs: T, toMs: T + 30_000, nextToken: undefined });
    // The shorter window from its start: the twins again, nothing new.
    expect(s.commitPage('m', cut.fetchId, T, page.slice(0, 2), { end: true }, T).appended).toBe(0);
    cp = s.getCheckpoint('m')!;
    expect(cp.watermarkMs).toBe(T + 30_000);
    expect(cp.planState).toBe('first half');
    // The cut-off part, read by the next window, delivers nothing twice either.
    cp = s.beginWindow('m', T + 30_000, T + 60_000);
    expect(s.commitPage('m', cp.fetchId, T + 30_000, page.slice(2), { end: true }, T).appended).toBe(0);
    expect(s.readAfter(0, 10).map((e) => e.log)).toEqual(['a', 'a', 'late']);
    s.close();
  });

  describe('windows that return nothing', () => {
    /** The checkpoint as another process would read it from the file. */
    const onDisk = (path: string, model: string) => {
      const r = StateReader.open(path);
      try {
        return r.getCheckpoint(model)!;
      } finally {
        r.close();
      }
    };

    it('wait 6 ms per model by default, at least 1 s and at most 60 s', () => {
      expect([1, 100, 1_000, 10_000, 100_000].map(quietFlushDelayMs)).toEqual([1_000, 1_000, 6_000, 60_000, 60_000]);
    });

    it('are visible at once, written together after quietFlushMs, and kept across a clean close', async () => {
      const path = join(dir, 'state.db');
      const s = StateStore.open(path, { quietFlushMs: 50 });
      for (const m of ['a', 'b']) {
        // The cached checkpoint changes with the model's windows: its fetch id is read now.
        const { fetchId } = s.ensureCheckpoint(m, T);
        expect(s.commitPage(m, fetchId + 1, T, [], { end: true }, T, { fromMs: T, toMs: T + 10_000, planStateAfter: '{"f":{}}' }).appended).toBe(0);
        expect(s.getCheckpoint(m)).toMatchObject({ watermarkMs: T + 10_000, window: undefined, fetchId: fetchId + 1, planState: '{"f":{}}' });
      }
      expect(onDisk(path, 'a').watermarkMs).toBeUndefined();
      await new Promise((r) => setTimeout(r, 200));
      expect(onDisk(path, 'a')).toMatchObject({ watermarkMs: T + 10_000, fetchId: 1, planState: '{"f":{}}' });
      expect(onDisk(path, 'b').watermarkMs).toBe(T + 10_000);

      s.commitPage('a', 2, T, [], { end: true }, T, { fromMs: T + 10_000, toMs: T + 20_000 });
      s.close();
      expect(onDisk(path, 'a')).toMatchObject({ watermarkMs: T + 20_000, fetchId: 2, planState: '{"f":{}}' });
    });

    it('are written with the same model\'s next commit, in its transaction', () => {
      const path = join(dir, 'state.db');
      const s = StateStore.open(path, { quietFlushMs: 60_000 });
      s.ensureCheckpoint('m', T);
      s.commitPage('m', 1, T, [], { end: true }, T, { fromMs: T, toMs: T + 10_000 });
      s.commitPage('m', 2, T + 10_000, [prep('2026-11-22T10:00:15Z', 'x')], { nextToken: 'p2' }, T, { fromMs: T + 10_000, toMs: T + 20_000 });
      expect(onDisk(path, 'm')).toMatchObject({ watermarkMs: T + 10_000, fetchId: 2, window: { fromMs: T + 10_000, toMs: T + 20_000, nextToken: 'p2' } });
      expect(s.getCheckpoint('m')).toEqual(onDisk(path, 'm'));
      s.close();
    });

    it('update the cached checkpoint in place, and the next write replaces it', () => {
      const path = join(dir, 'state.db');
      const s = StateStore.open(path, { quietFlushMs: 60_000 });
      const kept = s.ensureCheckpoint('m', T);
      s.commitPage('m', 1, T, [], { end: true }, T, { fromMs: T, toMs: T + 10_000, planStateAfter: '{"f":{"30000":1}}' });
      s.commitPage('m', 2, T + 10_000, [], { end: true }, T, { fromMs: T + 10_000, toMs: T + 20_000 });
      expect(s.getCheckpoint('m')).toBe(kept);
      expect(kept).toMatchObject({ watermarkMs: T + 20_000, fetchId: 2, window: undefined, planState: '{"f":{"30000":1}}' });
      s.commitPage('m', 3, T + 20_000, [prep('2026-11-22T10:00:25Z', 'x')], { end: true }, T, { fromMs: T + 20_000, toMs: T + 30_000 });
      expect(s.getCheckpoint('m')).not.toBe(kept);
      expect(s.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 30_000, fetchId: 3 });
      s.close();
      expect(onDisk(path, 'm')).toMatchObject({ watermarkMs: T + 30_000, fetchId: 3 });
    });

    it('include a window fetched in one page whose entries were all delivered before: nothing is written until the flush', () => {
      const path = join(dir, 'state.db');
      const s = StateStore.open(path, { quietFlushMs: 60_000 });
      const twins = [prep('2026-11-22T10:00:01.5Z', 'x'), prep('2026-11-22T10:00:01.5Z', 'x'), prep('2026-11-22T10:00:02.5Z', 'y')];
      s.ensureCheckpoint('m', T);
      expect(s.commitPage('m', 1, T, twins, { end: true }, T, { fromMs: T, toMs: T + 3_000 }).appended).toBe(3);
      const file = () => {
        const db = new Database(path, { readonly: true });
        try {
          return JSON.stringify([db.prepare('SELECT * FROM checkpoints').all(), db.prepare('SELECT model_id, bucket_ms, touched_ms, hex(keys) AS keys FROM dedupe ORDER BY bucket_ms').all()]);
        } finally {
          db.close();
        }
      };
      const before = file();
      const walBefore = statSync(`${path}-wal`).size;
      // A re-read of the window, then one of its end: entries delivered before, nothing new.
      const [x, , y] = twins as [PreparedEntry, PreparedEntry, PreparedEntry];
      expect(s.commitPage('m', 2, T, twins, { end: true }, T, { fromMs: T, toMs: T + 3_000, planStateAfter: '{"f":{"30000":1}}' })).toMatchObject({ appended: 0, duplicates: 3 });
      expect(s.commitPage('m', 3, T + 2_000, [y], { end: true }, T, { fromMs: T + 2_000, toMs: T + 5_000 })).toMatchObject({ appended: 0, duplicates: 1 });
      expect(file()).toBe(before);
      expect(statSync(`${path}-wal`).size).toBe(walBefore);
      expect(s.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 5_000, fetchId: 3, planState: '{"f":{"30000":1}}' });
      // A crash now (the files as they are, copied): the next fetches reuse the ids the deferred
      // pages had, and the counts of the file know nothing of them. A window of two pages under
      // id 3 shows y once per page: the second is a genuine twin, the first is not new.
      const crashed = join(dir, 'crashed.db');
      copyFileSync(path, crashed);
      copyFileSync(`${path}-wal`, `${crashed}-wal`);
      const c = StateStore.open(crashed);
      expect(c.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 3_000, fetchId: 1 });
      c.commitPage('m', 2, T + 3_000, [], { end: true }, T, { fromMs: T + 3_000, toMs: T + 5_000 });
      expect(c.commitPage('m', 3, T + 2_000, [y], { nextToken: 'p2' }, T, { fromMs: T + 2_000, toMs: T + 6_000 })).toMatchObject({ appended: 0, duplicates: 1 });
      expect(c.commitPage('m', 3, T + 2_000, [y], { end: true }, T)).toMatchObject({ appended: 1, duplicates: 0 });
      c.close();
      // The counts are intact: a third twin in a later fetch is new, the two others are not.
      expect(s.commitPage('m', 4, T, [...twins, x], { end: true }, T, { fromMs: T, toMs: T + 5_000 })).toMatchObject({ appended: 1, duplicates: 3 });
      expect(onDisk(path, 'm')).toMatchObject({ watermarkMs: T + 5_000, fetchId: 4, planState: '{"f":{"30000":1}}' });
      s.close();
    });

    it('a page of duplicates is written at once when an entry lies before its window, is newer than the newest known, or the window has more pages', () => {
      const path = join(dir, 'state.db');
      const s = StateStore.open(path, { quietFlushMs: 60_000 });
      const early = prep('2026-11-22T10:00:01.5Z', 'x');
      s.ensureCheckpoint('m', T);
      s.commitPage('m', 1, T, [early, prep('2026-11-22T10:00:04.5Z', 'y')], { end: true }, T, { fromMs: T, toMs: T + 5_000 });
      // The service sent an entry from before the window asked for: its bucket records that it came back.
      expect(s.commitPage('m', 2, T + 2_000, [early], { end: true }, T, { fromMs: T + 2_000, toMs: T + 6_000 }).appended).toBe(0);
      expect(onDisk(path, 'm')).toMatchObject({ watermarkMs: T + 6_000, fetchId: 2 });
      const db = new Database(path, { readonly: true });
      expect(db.prepare('SELECT touched_ms FROM dedupe WHERE bucket_ms = ?').pluck().get(T + 1_000)).toBe(T + 6_000);
      db.close();
      // The first page of a window of two pages.
      expect(s.commitPage('m', 3, T, [early], { nextToken: 'p2' }, T, { fromMs: T, toMs: T + 7_000 }).appended).toBe(0);
      expect(onDisk(path, 'm')).toMatchObject({ fetchId: 3, window: { nextToken: 'p2' } });
      s.commitPage('m', 3, T, [], { end: true }, T);
      // The checkpoint's newest entry is behind the page's (as after a file that never recorded it).
      const cp = s.getCheckpoint('m')!;
      cp.lastEntryNs = 1795341601000000000n;
      expect(s.commitPage('m', 4, T, [early], { end: true }, T, { fromMs: T, toMs: T + 8_000 }).appended).toBe(0);
      expect(onDisk(path, 'm')).toMatchObject({ watermarkMs: T + 8_000, fetchId: 4, lastEntryNs: 1795341604500000000n });
      s.close();
    });

    it('a multi-page window or a page with entries is never deferred', () => {
      const path = join(dir, 'state.db');
      const s = StateStore.open(path, { quietFlushMs: 60_000 });
      s.ensureCheckpoint('m', T);
      s.commitPage('m', 1, T, [], { nextToken: 'p2' }, T, { fromMs: T, toMs: T + 10_000 });
      expect(onDisk(path, 'm').window?.nextToken).toBe('p2');
      s.commitPage('m', 1, T, [], { end: true }, T);
      expect(onDisk(path, 'm').watermarkMs).toBe(T + 10_000);
      s.close();
    });
  });
});
