//! Group commit: pages of several models queued in one turn share one transaction; each
//! caller gets its own result; a failed transaction fails every page in it and commits none.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore, type PageToCommit, type PreparedEntry } from '../../src/journal/store.js';
import { GroupCommit } from '../../src/journal/group-commit.js';
import { contentHash } from '../../src/dedupe/key.js';
import { entryTimeNs } from '../../src/time/timestamp.js';

let dir: string;
let store: StateStore;
const T = Date.UTC(2026, 10, 22, 10, 0, 0);
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-group-'));
  store = StateStore.open(join(dir, 'state.db'));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function prep(time: string, log: string): PreparedEntry {
  return { entry: { time, log, stream: 'stdout' }, timeNs: entryTimeNs(time)!, hash: contentHash('stdout', log) };
}

function page(model: string, logs: string[], next: PageToCommit['next'] = { end: true }): PageToCommit {
  store.ensureCheckpoint(model, T);
  const cp = store.getCheckpoint(model)!;
  return { modelId: model, fetchId: cp.fetchId + 1, windowFromMs: T, entries: logs.map((l, i) => prep(`2026-11-22T10:00:0${i}Z`, l)), next, fetchedMs: T, begin: { fromMs: T, toMs: T + 10_000 } };
}

describe('group commit', () => {
  it('commits the pages queued in one turn in one transaction, seqs in queue order', async () => {
    const group = new GroupCommit(store);
    let transactions = 0;
    const commitPages = store.commitPages.bind(store);
    store.commitPages = (pages) => {
      transactions++;
      return commitPages(pages);
    };
    const [a, b, c] = await Promise.all([group.commit(page('a', ['a1', 'a2'])), group.commit(page('b', ['b1'])), group.commit(page('c', []))]);
    expect(transactions).toBe(1);
    expect([a, b, c].map((r) => [r!.firstSeq, r!.lastSeq, r!.appended])).toEqual([
      [1, 2, 2],
      [3, 3, 1],
      [undefined, undefined, 0],
    ]);
    expect(store.readAfter(0, 10).map((e) => [e.seq, e.modelId, e.log])).toEqual([
      [1, 'a', 'a1'],
      [2, 'a', 'a2'],
      [3, 'b', 'b1'],
    ]);
    expect(store.getCheckpoint('a')!.watermarkMs).toBe(T + 10_000);
    // the next turn is a new transaction
    await group.commit(page('a', ['a1', 'a2', 'a3']));
    expect(transactions).toBe(2);
    expect(store.lastSeq()).toBe(4);
  });

  it('fails every page of a failed transaction and commits none of them', async () => {
    const group = new GroupCommit(store);
    const pending = [group.commit(page('a', ['a1'])), group.commit(page('b', ['b1']))];
    store.close(); // the transaction runs after this turn, on a closed state file
    const results = await Promise.allSettled(pending);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/closed/);
    store = StateStore.open(join(dir, 'state.db'));
    expect(store.lastSeq()).toBe(0);
    expect(store.getCheckpoint('a')!.watermarkMs).toBeUndefined();
  });

  it('commits pages of one model queued together in order, the second deduped against the first', () => {
    const first = page('a', ['x', 'y'], { nextToken: 't' });
    // a second fetch of the same window (a re-read): x and y are the same occurrences again
    const second: PageToCommit = { ...page('a', ['x', 'y', 'z']), fetchId: first.fetchId + 1 };
    const [r1, r2] = store.commitPages([first, second]);
    expect([r1!.appended, r2!.appended, r2!.duplicates]).toEqual([2, 1, 2]);
    expect(store.readAfter(0, 10).map((e) => e.log)).toEqual(['x', 'y', 'z']);
  });
});
