//! Dead letters: kept whole, the cursor moved past them, marked for replay.
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

describe('dead letters', () => {
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
});
