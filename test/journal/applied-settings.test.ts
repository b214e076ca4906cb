//! The applied settings and their history in the state file: what is recorded, what a
//! failure leaves, the cap of the history, and files of versions that had no such tables.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SETTINGS_HISTORY_PER_MODEL } from '../../src/journal/applied-settings.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { StateReader } from '../../src/journal/reader.js';
import { StateStore } from '../../src/journal/store.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-applied-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `state-${++n}.db`);

describe('applied settings', () => {
  it('records applied values per field, and a failure only in the history', () => {
    let now = 1_000;
    const store = StateStore.open(fresh(), { now: () => now });
    try {
      store.settings.record('m', { min_replica: 1, machine_type: 'gpu' }, 'applied', 'Model m updated successfully.');
      now = 2_000;
      store.settings.record('m', { min_replica: 2 }, 'failed', 'HTTP 503');
      now = 3_000;
      store.settings.record('m', { is_dedicated: false }, 'recorded', 'adopted');
      expect(store.settings.applied('m')).toEqual({ min_replica: 1, machine_type: 'gpu', is_dedicated: false });
      expect(store.settings.applied('other')).toEqual({});
      expect(store.settings.history('m').map((h) => [h.atMs, h.outcome, h.fields, h.details])).toEqual([
        [1_000, 'applied', { min_replica: 1, machine_type: 'gpu' }, 'Model m updated successfully.'],
        [2_000, 'failed', { min_replica: 2 }, 'HTTP 503'],
        [3_000, 'recorded', { is_dedicated: false }, 'adopted'],
      ]);
    } finally {
      store.close();
    }
  });

  it(`keeps the last ${SETTINGS_HISTORY_PER_MODEL} applies of each model`, () => {
    const path = fresh();
    const store = StateStore.open(path);
    try {
      for (let i = 0; i < SETTINGS_HISTORY_PER_MODEL + 7; i++) store.settings.record('a', { max_replica: i }, 'applied', `#${i}`);
      store.settings.record('b', { max_replica: 1 }, 'applied', 'b');
      const a = store.settings.history('a');
      expect(a).toHaveLength(SETTINGS_HISTORY_PER_MODEL);
      expect(a[0]!.details).toBe('#7');
      expect(a.at(-1)!.details).toBe(`#${SETTINGS_HISTORY_PER_MODEL + 6}`);
      expect(store.settings.history('b')).toHaveLength(1);
      expect(store.settings.history(undefined, 3).map((h) => h.details)).toEqual([`#${SETTINGS_HISTORY_PER_MODEL + 5}`, `#${SETTINGS_HISTORY_PER_MODEL + 6}`, 'b']);
    } finally {
      store.close();
    }
    const reader = StateReader.open(path);
    try {
      expect(reader.settings.appliedAll()).toEqual(new Map([['a', { max_replica: SETTINGS_HISTORY_PER_MODEL + 6 }], ['b', { max_replica: 1 }]]));
    } finally {
      reader.close();
    }
  });

  it('a file of version 5 gets the tables at open, keeping what it held; read-only, it reads as nothing applied', () => {
    const path = fresh();
    const db = new Database(path);
    for (const m of MIGRATIONS.filter((m) => m.version <= 5)) db.exec(m.sql);
    db.pragma('user_version = 5');
    db.prepare("INSERT INTO meta (key, value) VALUES ('installation_id', 'kept')").run();
    db.close();

    const reader = StateReader.open(path);
    try {
      expect(reader.settings.appliedAll().size).toBe(0);
      expect(reader.settings.history()).toEqual([]);
    } finally {
      reader.close();
    }
    const store = StateStore.open(path);
    try {
      expect(store.installationId).toBe('kept');
      store.settings.record('m', { min_replica: 0 }, 'applied', 'ok');
      expect(store.settings.applied('m')).toEqual({ min_replica: 0 });
    } finally {
      store.close();
    }
  });
});
