//! Opening the state file: its mode and page size, the sync at open of what a killed
//! process left unsynced, a corrupt file's error, and a closed store refusing writes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { StateStore } from '../../src/journal/store.js';
import { StateError } from '../../src/errors.js';
import { T, prep } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('state file', () => {
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

  it('is made aside and renamed into place: what a crash left half made is replaced, and an empty state file is refused', () => {
    const path = join(dir, 'state.db');
    writeFileSync(`${path}.new`, ''); // a crash before SQLite wrote anything
    StateStore.open(path).close();
    expect(existsSync(`${path}.new`)).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    truncateSync(path, 0);
    expect(() => StateStore.open(path)).toThrow(expect.objectContaining({ code: 'MLS_ERR_STATE_CORRUPT', message: expect.stringContaining(`state file ${path} is corrupt (it is empty: 0 bytes)`) }));
    expect(statSync(path).size).toBe(0);
  });

  it('a closed store refuses every write with MLS_ERR_STATE_CLOSED, and closing again is harmless', () => {
    const s = StateStore.open(join(dir, 'state.db'));
    s.ensureCheckpoint('m', T);
    s.ensureSink('a');
    const cp = s.beginWindow('m', T, T + 10_000);
    s.close();
    s.close();
    const writes: Array<[string, () => unknown]> = [
      ['commitPage', () => s.commitPage('m', cp.fetchId, T, [prep('2026-11-22T10:00:01Z', 'x')], { end: true }, T)],
      ['ensureCheckpoint', () => s.ensureCheckpoint('n', T)],
      ['beginWindow', () => s.beginWindow('m', T, T + 20_000)],
      ['ensureSink', () => s.ensureSink('b')],
      ['ack', () => s.ack('a', 1, 1)],
      ['setInflight', () => s.setInflight('a', 1, 1, 'k')],
      ['trimJournal', () => s.trimJournal()],
      ['dropOldest', () => s.dropOldest(1)],
      ['pruneKeys', () => s.pruneKeys('m', T)],
      ['syncJournal', () => s.syncJournal()],
    ];
    const codes = writes.map(([name, write]) => {
      try {
        write();
        return `${name}: written`;
      } catch (err) {
        return `${name}: ${(err as StateError).code}`;
      }
    });
    expect(codes).toEqual(writes.map(([name]) => `${name}: MLS_ERR_STATE_CLOSED`));
  });
});
