//! Group commit: pages of several models queued in one turn share one transaction; each
//! caller gets its own result; a failed transaction fails every page in it and commits none.
//! Each group is synced to disk in the background; pages queued meanwhile wait and go
//! together; sinks see entries only once synced; a failed sync stops every later write.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore, type PageToCommit, type PreparedEntry, type WalSync } from '../../src/journal/store.js';
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

/** Counts the store's commitPages calls (one per transaction, or per quiet window committed at once). */
function countCommits(): { calls: number } {
  const counter = { calls: 0 };
  const commitPages = store.commitPages.bind(store);
  store.commitPages = (pages, options) => {
    counter.calls++;
    return commitPages(pages, options);
  };
  return counter;
}

describe('group commit', () => {
  it('commits the pages queued in one turn in one transaction, seqs in queue order', async () => {
    const group = new GroupCommit(store);
    const commits = countCommits();
    // c: an empty page with a next page to come still moves its token in the group's transaction.
    const [a, b, c] = await Promise.all([group.commit(page('a', ['a1', 'a2'])), group.commit(page('b', ['b1'])), group.commit(page('c', [], { nextToken: 't' }))]);
    expect(commits.calls).toBe(1);
    expect([a, b, c].map((r) => [r!.firstSeq, r!.lastSeq, r!.appended])).toEqual([
      [1, 2, 2],
      [3, 3, 1],
      [undefined, undefined, 0],
    ]);
    await group.settled(); // sinks read only what is on disk
    expect(store.readAfter(0, 10).map((e) => [e.seq, e.modelId, e.log])).toEqual([
      [1, 'a', 'a1'],
      [2, 'a', 'a2'],
      [3, 'b', 'b1'],
    ]);
    expect(store.getCheckpoint('a')!.watermarkMs).toBe(T + 10_000);
    // the next turn is a new transaction
    await group.commit(page('a', ['a1', 'a2', 'a3']));
    expect(commits.calls).toBe(2);
    expect(store.lastSeq()).toBe(4);
  });

  it('commits an empty window of a quiet model at once, without waiting for the group', async () => {
    const group = new GroupCommit(store);
    const commits = countCommits();
    const queued = group.commit(page('a', ['a1']));
    const quiet = page('q', []);
    const done = group.commit(quiet);
    // Before the group's turn: the quiet window is committed (its checkpoint moved), the other page not yet.
    expect(commits.calls).toBe(1);
    expect(store.getCheckpoint('q')!.watermarkMs).toBe(T + 10_000);
    expect(store.getCheckpoint('a')!.watermarkMs).toBeUndefined();
    expect(await done).toEqual({ appended: 0, duplicates: 0, firstSeq: undefined, lastSeq: undefined });
    expect((await queued).appended).toBe(1);
    expect(commits.calls).toBe(2);
    // A closed state file fails the quiet window as it fails a group.
    const later = page('q2', []);
    store.close();
    await expect(group.commit(later)).rejects.toThrow(/closed/);
    store = StateStore.open(join(dir, 'state.db'));
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

  it('syncs each group in the background: the caller has its result at once, sinks once it is synced', async () => {
    const group = new GroupCommit(store);
    const r = await group.commit(page('a', ['a1', 'a2']));
    expect(r.appended).toBe(2);
    // In the WAL (a crash of the process cannot undo it), not yet known to be on disk.
    expect(store.lastSeq()).toBe(2);
    expect(store.durableSeq()).toBe(0);
    expect(store.slicesAfter(0, 10)).toEqual([]);
    await group.settled();
    expect(store.durableSeq()).toBe(2);
    expect(store.readAfter(0, 10).map((e) => e.log)).toEqual(['a1', 'a2']);
  });

  it('holds pages that arrive during a sync and commits them together after it; sinks read only what is synced', async () => {
    store.close();
    const held = heldSync();
    store = StateStore.open(join(dir, 'state.db'), { walSync: held.sync });
    let durable = 0;
    const group = new GroupCommit(store, { onDurable: () => durable++ });
    let transactions = 0;
    const commitPages = store.commitPages.bind(store);
    store.commitPages = (pages, options) => {
      transactions++;
      expect(options).toEqual({ sync: false });
      return commitPages(pages, options);
    };
    await group.commit(page('a', ['a1']));
    expect(held.pending).toBe(1);
    const b = group.commit(page('b', ['b1']));
    const c = group.commit(page('c', ['c1', 'c2']));
    await turns(3);
    expect(transactions).toBe(1); // b and c wait for the sync of a
    expect(store.lastSeq()).toBe(1);
    expect(store.slicesAfter(0, 10)).toEqual([]);

    held.release();
    const [rb, rc] = await Promise.all([b, c]);
    expect([rb.firstSeq, rc.firstSeq, rc.lastSeq]).toEqual([2, 3, 4]);
    expect(transactions).toBe(2);
    expect(durable).toBe(1);
    expect(store.durableSeq()).toBe(1);
    expect(store.readAfter(0, 10).map((e) => e.log)).toEqual(['a1']);
    // a slice never crosses the synced seq, even inside a page
    expect(store.slicesAfter(0, 10).map((s) => [s.page.firstSeq, s.from, s.to])).toEqual([[1, 0, 1]]);

    expect(held.pending).toBe(1);
    held.release();
    await group.settled();
    expect(durable).toBe(2);
    expect(store.readAfter(0, 10).map((e) => e.log)).toEqual(['a1', 'b1', 'c1', 'c2']);
  });

  it('a failed sync fails the pages waiting for it and every later write; a restart recovers from the file', async () => {
    store.close();
    const held = heldSync();
    store = StateStore.open(join(dir, 'state.db'), { walSync: held.sync });
    const failures: unknown[] = [];
    const group = new GroupCommit(store, { onSyncFailure: (err) => failures.push(err) });
    store.ensureSink('files');
    await group.commit(page('a', ['a1']));
    const waiting = group.commit(page('b', ['b1']));
    const later = page('c', ['c1']);
    await turns(2);
    held.release(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    expect(await waiting.catch((err: { code?: string }) => err.code)).toBe('MLS_ERR_STATE_SYNC');
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toMatch(/could not sync the state file .*state\.db.*EIO.*restart mls/);
    expect(await group.commit(later).catch((err: { code?: string }) => err.code)).toBe('MLS_ERR_STATE_SYNC');
    expect(() => store.ack('files', 1, 1)).toThrow(/could not sync/);
    expect(() => store.ensureCheckpoint('d', T)).toThrow(/could not sync/);
    expect(store.durableSeq()).toBe(0); // nothing unsynced reaches a sink
    store.close();
    // The next start syncs the WAL the failed process left before anything is read.
    const again = heldSync();
    store = StateStore.open(join(dir, 'state.db'), { walSync: again.sync });
    expect(again.syncedAtOpen).toBe(1);
    expect(store.durableSeq()).toBe(store.lastSeq());
    expect(store.readAfter(0, 10).map((e) => e.log)).toEqual(['a1']);
  });
});

/** Lets the event loop run `n` times. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** A WAL sync that completes only when the test releases it. */
function heldSync() {
  const waiting: Array<(err: NodeJS.ErrnoException | null) => void> = [];
  let syncedAtOpen = 0;
  const sync: WalSync = {
    background: (_fd, done) => waiting.push(done),
    now: () => {
      syncedAtOpen++;
    },
  };
  return {
    sync,
    get pending() {
      return waiting.length;
    },
    get syncedAtOpen() {
      return syncedAtOpen;
    },
    release(err: NodeJS.ErrnoException | null = null) {
      const done = waiting.shift();
      if (!done) throw new Error('no sync is waiting');
      done(err);
    },
  };
}
