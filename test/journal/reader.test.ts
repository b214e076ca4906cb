//! The read-only reader of the commands that only look: it reads a file being written as
//! it is at each read, leaves a file exactly as it found it (no migration, no installation
//! id, no sync), and gives the same status snapshot as the daemon's store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StateStore, type StatusStore } from '../../src/journal/store.js';
import { StateReader } from '../../src/journal/reader.js';
import { buildStatus } from '../../src/daemon/status.js';
import { StateError } from '../../src/errors.js';
import { T, prep } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-reader-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A store with model m, sinks a and hook, `n` entries of m, and one dead letter of hook. */
function writtenStore(path: string, n: number): StateStore {
  const s = StateStore.open(path);
  s.ensureCheckpoint('m', T);
  s.ensureSink('a');
  s.ensureSink('hook');
  const cp = s.beginWindow('m', T, T + 10_000);
  s.commitPage('m', cp.fetchId, T, Array.from({ length: n }, (_, i) => prep(`2026-11-22T10:00:0${i}Z`, `e${i}`)), { end: true }, T);
  s.deadLetter('hook', 1, 1, s.readRange(1, 1), 'HTTP 400: nope');
  return s;
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('state reader', () => {
  it('reads a file another connection is writing as it is at each read', () => {
    const path = join(dir, 'state.db');
    const s = writtenStore(path, 3);
    const reader = StateReader.open(path);
    try {
      expect([reader.lastSeq(), reader.journalSize().entries]).toEqual([3, 3]);
      expect(reader.installationId).toBe(s.installationId);
      expect(reader.getCheckpoint('m')!.watermarkMs).toBe(T + 10_000);
      expect(reader.listSinks().map((x) => [x.name, x.cursor])).toEqual([
        ['a', 0],
        ['hook', 1],
      ]);
      expect(reader.listDeadLetters('hook').map((d) => d.entries.map((e) => e.log))).toEqual([['e0']]);
      expect(reader.deadLetterCounts().get('hook')).toEqual({ batches: 1, entries: 1 });
      // Written after the reader opened, without waiting for the disk: seen at the next read.
      const cp = s.beginWindow('m', T + 10_000, T + 20_000);
      s.commitPages([{ modelId: 'm', fetchId: cp.fetchId, windowFromMs: T + 10_000, entries: [prep('2026-11-22T10:00:15Z', 'later')], next: { end: true }, fetchedMs: T }], { sync: false });
      s.ack('a', 4, 4);
      expect([reader.lastSeq(), reader.journalSize().entries]).toEqual([4, 4]);
      expect(reader.getCheckpoint('m')!.watermarkMs).toBe(T + 20_000);
      expect(reader.listSinks()[0]!.cursor).toBe(4);
      expect(reader.integrityCheck()).toEqual([]);
    } finally {
      reader.close();
      reader.close();
      s.close();
    }
  });

  it('leaves a file of an earlier schema as it found it: not migrated, no installation id made', () => {
    const path = join(dir, 'v4.db');
    const s = writtenStore(path, 2);
    s.setInflight('a', 1, 2, 'key-of-schema-5');
    s.close();
    // Back to what schema 4 left on disk: no installation id, no batch keys, no window tokens, no start_at.
    const db = new Database(path);
    db.exec("DELETE FROM meta WHERE key = 'installation_id'; ALTER TABLE inflight DROP COLUMN batch_key; ALTER TABLE checkpoints DROP COLUMN win_tokens; ALTER TABLE checkpoints DROP COLUMN start_at;");
    db.pragma('user_version = 4');
    db.close();
    const before = sha(path);

    const reader = StateReader.open(path);
    expect(reader.installationId).toBeUndefined();
    expect(reader.getCheckpoint('m')).toMatchObject({ watermarkMs: T + 10_000, startAt: undefined });
    expect(reader.listSinks()[0]!.inflightRanges).toEqual([{ firstSeq: 1, lastSeq: 2, key: undefined }]);
    expect(reader.lastSeq()).toBe(2);
    reader.close();

    expect(sha(path)).toBe(before);
    const check = new Database(path, { readonly: true });
    try {
      expect(check.pragma('user_version', { simple: true })).toBe(4);
    } finally {
      check.close();
    }
  });

  it('does not create a missing file, and names a corrupt one with the way out', () => {
    const missing = join(dir, 'none', 'state.db');
    expect(() => StateReader.open(missing)).toThrow(expect.objectContaining({ code: 'MLS_ERR_STATE_OPEN' }));
    expect(existsSync(join(dir, 'none'))).toBe(false);

    const corrupt = join(dir, 'corrupt.db');
    writeFileSync(corrupt, 'this is not a database'.repeat(1000));
    let err: unknown;
    try {
      StateReader.open(corrupt);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StateError);
    expect((err as StateError).code).toBe('MLS_ERR_STATE_CORRUPT');
    expect((err as Error).message).toContain('mls state check');
  });

  it('gives the same status snapshot as the store that wrote the file', () => {
    const path = join(dir, 'state.db');
    const s = writtenStore(path, 3);
    s.ack('a', 2, 2);
    const ctx = { models: ['m'], sinkTypes: new Map([['a', 'file'], ['hook', 'webhook']]) };
    const fromStore = buildStatus(s, T + 60_000, ctx);
    s.close();
    const reader = StateReader.open(path);
    try {
      const fromFile = buildStatus(reader as StatusStore as StateStore, T + 60_000, ctx);
      expect(fromFile).toEqual(fromStore);
      expect(fromFile.sinks.map((x) => [x.name, x.backlogEntries, x.deadLetters])).toEqual([
        ['a', 1, 0],
        ['hook', 2, 1],
      ]);
    } finally {
      reader.close();
    }
  });
});
