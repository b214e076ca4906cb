import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StateStore, type PreparedEntry } from '../../src/journal/store.js';
import { acquireStateLock } from '../../src/journal/lock.js';
import { contentHash, legacyContentHash } from '../../src/dedupe/key.js';
import { KEYS_TRAILER, PackedBucket, bucketOf, hashWords } from '../../src/dedupe/buckets.js';
import { createPageParser } from '../../src/api/page/index.js';
import { preparePage } from '../../src/poller/prepare.js';
import { parseEntryTime } from '../../src/time/timestamp.js';
import { StateError } from '../../src/errors.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { entryToNdjson } from '../../src/records/ndjson.js';
import Database from 'better-sqlite3';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function prep(time: string, log: string, stream = 'stdout'): PreparedEntry {
  const t = parseEntryTime(time);
  if (!t.ok) throw new Error(t.reason);
  return { entry: { time, log, stream }, timeNs: t.ns, hash: contentHash(stream, log) };
}

const T = Date.UTC(2026, 10, 22, 10, 0, 0);

/** The page test/fixtures/state/state-v3.db holds: twins, escapes, non-ASCII, a `\u` escape, a bad time. */
const FIXTURE_PAGE = [
  { time: '2026-11-22T10:00:01.100000000Z', log: 'INFO [worker-1] POST /predict 200 in 12.5ms', stream: 'stdout' },
  { time: '2026-11-22T10:00:01.100000000Z', log: 'INFO [worker-1] POST /predict 200 in 12.5ms', stream: 'stdout' },
  { time: '2026-11-22T10:00:01.250000001Z', log: 'request body={"prompt":"say \\"hi\\""}\ttook 3ms\n', stream: 'stdout' },
  { time: '2026-11-22T10:00:01.5Z', log: 'naïve café ✓ 模型', stream: 'stderr' },
  { time: '2026-11-22T10:00:01.75Z', log: 'bell \u0001 and slash / end', stream: 'stderr' },
  { time: 'yesterday at noon', log: 'a line whose time does not parse', stream: 'stdout' },
  { time: '2026-11-22T10:00:02.000000500Z', log: 'WARN queue depth 31 above 30', stream: 'stdout' },
  { time: '2026-11-22T10:00:02.9Z', log: 'short', stream: 'stdout' },
];

describe('state store', () => {
  it('creates the state file with mode 0600 inside a 0700 folder', () => {
    const path = join(dir, 'sub', 'state.db');
    StateStore.open(path).close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'sub')).mode & 0o777).toBe(0o700);
  });

  it('creates new files with 16 KiB pages and keeps the page size of existing ones', () => {
    const fresh = join(dir, 'fresh.db');
    StateStore.open(fresh).close();
    const older = join(dir, 'older.db');
    const db = new Database(older);
    db.pragma('journal_mode = WAL'); // SQLite's default 4 KiB pages, as earlier versions created them
    db.close();
    const s = StateStore.open(older);
    s.ensureCheckpoint('m', T);
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:03Z', 'x'.repeat(50_000))], { end: true }, T);
    s.close();
    const pageSize = (path: string) => {
      const d = new Database(path, { readonly: true });
      try {
        return d.pragma('page_size', { simple: true });
      } finally {
        d.close();
      }
    };
    expect([pageSize(fresh), pageSize(older)]).toEqual([16_384, 4_096]);
    const again = StateStore.open(older);
    expect(again.readAfter(0, 10).map((e) => e.log.length)).toEqual([50_000]);
    again.close();
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
      const r = StateStore.open(path, { readonly: true });
      try {
        return r.getCheckpoint(model)!;
      } finally {
        r.close();
      }
    };

    it('are visible at once, written together after quietFlushMs, and kept across a clean close', async () => {
      const path = join(dir, 'state.db');
      const s = StateStore.open(path, { quietFlushMs: 50 });
      for (const m of ['a', 'b']) {
        const cp = s.ensureCheckpoint(m, T);
        expect(s.commitPage(m, cp.fetchId + 1, T, [], { end: true }, T, { fromMs: T, toMs: T + 10_000, planStateAfter: '{"f":{}}' }).appended).toBe(0);
        expect(s.getCheckpoint(m)).toMatchObject({ watermarkMs: T + 10_000, window: undefined, fetchId: cp.fetchId + 1, planState: '{"f":{}}' });
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

  it('commits made without a sync reach sinks only once synced; after a SIGKILL the next open syncs them first', () => {
    const path = join(dir, 'state.db');
    const store = (n: string) => pathToFileURL(join(__dirname, '..', '..', 'dist', n)).href;
    // A real process commits two pages without waiting for the disk, then dies by SIGKILL.
    const child = `
      const { StateStore } = await import(${JSON.stringify(store('journal/store.js'))});
      const { contentHash } = await import(${JSON.stringify(store('dedupe/key.js'))});
      const { entryTimeNs } = await import(${JSON.stringify(store('time/timestamp.js'))});
      const s = StateStore.open(${JSON.stringify(path)});
      s.ensureCheckpoint('m', ${T});
      const cp = s.beginWindow('m', ${T}, ${T + 10_000});
      const e = (time, log) => ({ entry: { time, log, stream: 'stdout' }, timeNs: entryTimeNs(time), hash: contentHash('stdout', log) });
      const page = (logs, next) => ({ modelId: 'm', fetchId: cp.fetchId, windowFromMs: ${T}, entries: logs.map((l, i) => e('2026-11-22T10:00:0' + i + 'Z', l)), next, fetchedMs: ${T} });
      s.commitPages([page(['a', 'b'], { nextToken: 't' })], { sync: false });
      s.commitPages([page(['c'], { end: true })], { sync: false });
      if (s.durableSeq() !== 0 || s.slicesAfter(0, 10).length !== 0) throw new Error('unsynced entries are readable');
      process.kill(process.pid, 'SIGKILL');`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.signal).toBe('SIGKILL');

    let syncedAtOpen = 0;
    const s = StateStore.open(path, {
      walSync: {
        background: () => {
          throw new Error('not expected');
        },
        now: () => {
          syncedAtOpen++;
        },
      },
    });
    expect(syncedAtOpen).toBe(1); // before anything can be read
    expect(s.lastSeq()).toBe(3);
    expect(s.durableSeq()).toBe(3);
    expect(s.readAfter(0, 10).map((e) => e.log)).toEqual(['a', 'b', 'c']);
    expect(s.getCheckpoint('m')!.watermarkMs).toBe(T + 10_000);
    s.close();
  });

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
    const reader = StateStore.open(path, { readonly: true });
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
      const { page } = preparePage(createPageParser({ first: scanned ? 'kernel' : 'json' })(bytes, 200), T);
      return s.commitPages([{ modelId: 'm', fetchId: cp.fetchId, windowFromMs: T, entries: page, next: { end: true }, fetchedMs: T }])[0]!;
    };
    expect(s.readAfter(0, 100).map((e) => e.log)).toEqual(FIXTURE_PAGE.map((e) => e.log));
    // The same page read again, from the body's bytes and from entry objects: nothing new.
    expect(fetch(FIXTURE_PAGE, true)).toMatchObject({ appended: 0, duplicates: 8 });
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
    expect(s.readAfter(8, 100).map((e) => e.log)).toEqual([FIXTURE_PAGE[0]!.log, 'late line in an old second', 'after the upgrade']);
    s.close();
    const check = new Database(path, { readonly: true });
    try {
      const blobs = check.prepare('SELECT bucket_ms, keys FROM dedupe ORDER BY bucket_ms').all() as { bucket_ms: number; keys: Buffer }[];
      const trailer = (b: Buffer) => (b.byteLength % 28 === 4 ? b.readUInt32LE(b.byteLength - 4) : undefined);
      // Old seconds (and the window start, where the line with a bad time is keyed) stay as
      // they were; the new second carries the trailer of the current hash.
      expect(blobs.map((b) => [b.bucket_ms - T, trailer(b.keys)])).toEqual([
        [0, undefined],
        [1_000, undefined],
        [2_000, undefined],
        [5_000, KEYS_TRAILER],
      ]);
    } finally {
      check.close();
    }
  });

  it('dead letters keep their entries and move the cursor past them', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    s.ensureSink('hook');
    const cp = s.beginWindow('m', T, T + 10_000);
    s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:01.5Z', 'bad')], { end: true }, T);
    const entries = s.readAfter(0, 10);
    s.deadLetter('hook', 1, 1, entries, 'HTTP 400: nope');
    expect(s.getSink('hook')!.cursor).toBe(1);
    const [d] = s.listDeadLetters('hook');
    expect(d!.entries).toEqual(entries);
    expect(s.requestReplay('hook')).toBe(1);
    expect(s.nextReplay('hook')!.id).toBe(d!.id);
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

  it('a corrupt state file gives a clear error naming the file and the way out', () => {
    const path = join(dir, 'state.db');
    writeFileSync(path, 'this is not a database'.repeat(1000));
    let err: unknown;
    try {
      StateStore.open(path);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StateError);
    expect((err as StateError).code).toBe('MLS_ERR_STATE_CORRUPT');
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).toContain('mls state check');
  });

  it('a second writer is refused while the lock is held, and admitted after release', () => {
    const path = join(dir, 'state.db');
    const lock = acquireStateLock(path);
    expect(() => acquireStateLock(path)).toThrow(/in use by another mls daemon \(pid \d+\)/);
    lock.release();
    lock.release();
    acquireStateLock(path).release();
  });
});
