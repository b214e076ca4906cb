//! The state file: one SQLite database (WAL, synchronous=FULL) holding per-model
//! checkpoints, dedupe counts, the journal of new entries, per-sink cursors and the
//! dead-letter table. Every page of logs is committed in one transaction together
//! with the checkpoint, so the checkpoint never moves ahead of durable entries. Sinks
//! read only entries already on disk: the daemon commits pages without waiting for the
//! disk and syncs the WAL in the background (see group-commit.ts and durableSeq).
//!
//! StateStore is the daemon's face of the file: each part lives in its own module
//! (db.ts, checkpoints.ts, dedupe-counts.ts, entries.ts, cursors.ts, dead-letters.ts,
//! page-commit.ts); the commands that only read use StateReader (reader.ts).
import type { SinkEntry } from '../records/entry.js';
import { AppliedSettings } from './applied-settings.js';
import type { Checkpoint } from './checkpoint-reads.js';
import { Checkpoints, type NewCheckpoint, type PageContinuation, type StartAtRecord, type WindowStart } from './checkpoints.js';
import { Cursors, type HeldGroups, type SinkCursor } from './cursors.js';
import { DeadLetters, type DeadLetter, type Letter } from './dead-letters.js';
import { DedupeCounts } from './dedupe-counts.js';
import { StateDb, ensureInstallationId, integrityCheck, openWritable, type WalSync } from './db.js';
import { JournalEntries } from './entries.js';
import { PageCommitter, type PageCommit, type PageToCommit } from './page-commit.js';
import type { PageSlice } from './pages.js';
import type { PreparedEntry } from './prepared.js';
import type { StatusStore } from './status-store.js';

export type { Checkpoint } from './checkpoint-reads.js';
export type { NewCheckpoint, PageContinuation, StartAtRecord, WindowStart } from './checkpoints.js';
export type { HeldGroups, InflightBatch, SinkCursor } from './cursors.js';
export type { DeadLetter } from './dead-letters.js';
export type { WalSync } from './db.js';
export type { AppliedFields, AppliedValue, SettingsHistoryEntry, SettingsOutcome } from './applied-settings.js';
export type { PageCommit, PageToCommit } from './page-commit.js';
export type { PreparedEntry, PreparedPage } from './prepared.js';
export type { StatusStore } from './status-store.js';

/** Options of {@link StateStore.open}. */
export interface StoreOptions {
  now?: () => number;
  /** How long windows that returned nothing may wait before they are written together (ms; default 1 ms per model, between 1 s and 10 s). */
  quietFlushMs?: number;
  /** How the WAL is synced (default: `fdatasync` of `node:fs`; tests hold a sync back or fail it). */
  walSync?: WalSync;
}

/** The daemon's state file, open for writing. Synchronous (better-sqlite3); one instance per process. */
export class StateStore implements StatusStore {
  /** Random id of this state file, part of every batch id (see {@link ensureInstallationId}). */
  readonly installationId: string;
  /** Model settings as last applied, and the history of applies (see applied-settings.ts). */
  readonly settings: AppliedSettings;
  private readonly checkpoints: Checkpoints;
  private readonly dedupe: DedupeCounts;
  private readonly entries: JournalEntries;
  private readonly cursors: Cursors;
  private readonly deadLetters: DeadLetters;
  private readonly pages: PageCommitter;

  private constructor(
    private readonly state: StateDb,
    options: StoreOptions,
  ) {
    const now = options.now ?? Date.now;
    this.entries = new JournalEntries(state);
    this.checkpoints = new Checkpoints(state, now, options.quietFlushMs);
    this.dedupe = new DedupeCounts(state);
    this.cursors = new Cursors(state, now);
    this.deadLetters = new DeadLetters(state, this.cursors, now);
    this.pages = new PageCommitter(state, this.checkpoints, this.dedupe, this.entries);
    this.settings = new AppliedSettings(state, now);
    this.installationId = ensureInstallationId(state.db);
  }

  /**
   * Opens (creating with mode 0600 in a 0700 folder if needed) and migrates the state
   * file. A file that is not a usable SQLite database raises a StateError that names it
   * and says how to recover.
   */
  static open(path: string, options: StoreOptions = {}): StateStore {
    return openWritable(path, (db) => new StateStore(new StateDb(path, db, options.walSync), options));
  }

  get path(): string {
    return this.state.path;
  }

  // ---- checkpoints -------------------------------------------------------------------

  /**
   * The checkpoint of a model, if it was ever seen: the object the store keeps, which a
   * window that returns nothing updates in place. Read what is needed now, or copy it.
   */
  getCheckpoint(modelId: string): Checkpoint | undefined {
    return this.checkpoints.get(modelId);
  }

  /** All checkpoints (for status). */
  listCheckpoints(): Checkpoint[] {
    return this.checkpoints.list();
  }

  /** Returns the model's checkpoint (as {@link StateStore.getCheckpoint} does), creating it with `startMs` when the model is new. */
  ensureCheckpoint(modelId: string, startMs: number, startAt?: string): Checkpoint {
    return this.checkpoints.ensure(modelId, startMs, startAt);
  }

  /** Creates the checkpoints of models new to the file in one transaction (see {@link Checkpoints.ensureMany}). */
  ensureCheckpoints(models: readonly NewCheckpoint[]): void {
    this.checkpoints.ensureMany(models);
  }

  /** Records the `start_at` settings that models' stored starts now answer to, in one transaction (see {@link Checkpoints.recordStartAts}). */
  recordStartAts(changes: readonly StartAtRecord[]): void {
    this.checkpoints.recordStartAts(changes);
  }

  /** Starts a new fetch of window [fromMs, toMs] (see {@link Checkpoints.beginWindow}). */
  beginWindow(modelId: string, fromMs: number, toMs: number, planStateAfter?: string): Checkpoint {
    return this.checkpoints.beginWindow(modelId, fromMs, toMs, planStateAfter);
  }

  /** Restarts the window in progress from its first page (new fetch id, no token). */
  restartWindow(modelId: string): Checkpoint {
    return this.checkpoints.restartWindow(modelId);
  }

  /** Cuts the window in progress short at `toMs` and fetches it again from its first page (see {@link Checkpoints.shortenWindow}). */
  shortenWindow(modelId: string, toMs: number, planStateAfter?: string): Checkpoint {
    return this.checkpoints.shortenWindow(modelId, toMs, planStateAfter);
  }

  /**
   * Commits one page of window fetch `fetchId`, in one transaction: the new entries
   * (by occurrence counts), the dedupe counts, and the token of the next page or the end
   * of the window (moving the watermark to the window's end). A window that is one empty
   * page is written later, with others (see {@link Checkpoints.deferQuiet}).
   */
  commitPage(modelId: string, fetchId: number, windowFromMs: number, entries: readonly PreparedEntry[], next: PageContinuation, fetchedMs: number, begin?: WindowStart): PageCommit {
    return this.commitPages([{ modelId, fetchId, windowFromMs, entries, next, fetchedMs, begin }])[0]!;
  }

  /**
   * Commits pages, each as {@link StateStore.commitPage} does, in one transaction: pages of
   * several models that arrived together share one fsync. Seqs follow the order of `pages`.
   * If the transaction fails, none of them is committed. With `sync: false` the transaction
   * does not wait for the disk: its entries reach sinks only after {@link StateStore.syncJournal}.
   */
  commitPages(pages: readonly PageToCommit[], options: { sync?: boolean } = {}): PageCommit[] {
    return this.pages.commitPages(pages, options.sync !== false);
  }

  /** Writes the checkpoint updates of windows that returned nothing, in one unsynced transaction. */
  flushQuiet(): void {
    this.checkpoints.flushQuiet();
  }

  /** Forgets dedupe keys no future window can reach (see {@link DedupeCounts.pruneKeys}); returns the buckets removed. */
  pruneKeys(modelId: string, horizonMs: number): number {
    return this.dedupe.pruneKeys(modelId, horizonMs);
  }

  // ---- journal -----------------------------------------------------------------------

  /** Rows and approximate bytes currently in the journal. */
  journalSize(): { entries: number; bytes: number } {
    return this.entries.size();
  }

  /** Highest seq ever assigned (0 when none). */
  lastSeq(): number {
    return this.state.lastSeq;
  }

  /** The highest seq of an entry of `modelId` committed to the journal (0: none). */
  journaledThrough(modelId: string): number {
    return this.entries.journaledThrough(modelId);
  }

  /** Highest seq whose entries are on disk: what sinks may read. */
  durableSeq(): number {
    return this.state.durableSeq;
  }

  /** Makes every commit so far durable, in the background; a failed sync is final (see {@link StateDb.syncWal}). */
  syncJournal(): Promise<void> {
    return this.state.syncWal();
  }

  /** Up to `limit` entries after `afterSeq`, stopping early once `maxBytes` is reached. */
  readAfter(afterSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): SinkEntry[] {
    return this.entries.readAfter(afterSeq, limit, maxBytes);
  }

  /** The entries with seq in [firstSeq, lastSeq] that are still in the journal. */
  readRange(firstSeq: number, lastSeq: number): SinkEntry[] {
    return this.entries.readRange(firstSeq, lastSeq);
  }

  /** The durable journal after `afterSeq` as page slices, cut by count and bytes (see {@link JournalEntries.slicesAfter}). */
  slicesAfter(afterSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): PageSlice[] {
    return this.entries.slicesAfter(afterSeq, limit, maxBytes);
  }

  /** The entries with seq in [firstSeq, lastSeq] that are still in the journal, as page slices. */
  slicesOfRange(firstSeq: number, lastSeq: number): PageSlice[] {
    return this.entries.slicesOfRange(firstSeq, lastSeq);
  }

  /** Deletes rows every sink has passed. Returns the number deleted. */
  trimJournal(): number {
    const min = this.cursors.minCursor();
    return min === null ? 0 : this.entries.deleteThrough(min).n;
  }

  /**
   * Makes room by dropping the oldest `entries` rows (or enough rows to free `bytes`):
   * lagging cursors are moved past them and each sink's drop count grows by the rows it
   * had not yet delivered. Returns the entries dropped per sink.
   */
  dropOldest(entries: number, bytes = 0): Map<string, number> {
    this.state.assertWritable();
    const span = this.entries.oldest(entries, bytes);
    if (!span) return new Map();
    const dropped = this.cursors.moveLaggingPast(span.firstSeq, span.lastSeq);
    this.entries.deleteThrough(span.lastSeq);
    return dropped;
  }

  // ---- sinks -------------------------------------------------------------------------

  /**
   * Returns a sink's cursor row, creating it when the sink is new. A new sink starts at
   * the journal's current end: it receives entries fetched from now on.
   */
  ensureSink(name: string): SinkCursor {
    return this.cursors.ensure(name, this.state.lastSeq);
  }

  /** A sink's cursor row. */
  getSink(name: string): SinkCursor | undefined {
    return this.cursors.get(name);
  }

  /** All sink rows. */
  listSinks(): SinkCursor[] {
    return this.cursors.list();
  }

  /** Removes the rows of sinks no longer configured, so they stop holding the journal. */
  removeSinksExcept(names: readonly string[]): string[] {
    return this.cursors.removeExcept(names);
  }

  /** Records the seq range of a batch about to be sent and its key: a restart rebuilds it and sends it under that key. */
  setInflight(name: string, firstSeq: number, lastSeq: number, key: string, closes?: string): void {
    this.cursors.setInflight(name, firstSeq, lastSeq, key, closes);
  }

  /**
   * Moves a sink's cursor after an acknowledged batch, with the sink's state, and forgets
   * the in-flight ranges it covers, in one transaction not waiting for the disk (see {@link Cursors.ack}).
   */
  ack(name: string, lastSeq: number, delivered: number, state?: string, held?: HeldGroups): void {
    this.cursors.ack(name, lastSeq, delivered, state, held);
  }

  /** Stores a sink's state without moving its cursor. */
  setSinkState(name: string, state: string): void {
    this.cursors.setState(name, state);
  }

  // ---- dead letters ------------------------------------------------------------------

  /** Stores a rejected batch and moves the sink's cursor past it, in one transaction. */
  deadLetter(name: string, firstSeq: number, lastSeq: number, entries: readonly SinkEntry[], error: string, held?: HeldGroups): void {
    this.deadLetters.add(name, [{ firstSeq, lastSeq, entries, error }], { lastSeq, delivered: 0, state: undefined, held });
  }

  /** {@link ack} for a batch whose sink set entries aside: each is dead-lettered alone, in the same transaction. */
  ackSettingAside(name: string, lastSeq: number, delivered: number, state: string | undefined, held: HeldGroups | undefined, letters: readonly Letter[]): void {
    this.deadLetters.add(name, letters, { lastSeq, delivered, state, held });
  }

  /** Dead letters, oldest first, optionally of one sink. */
  listDeadLetters(sink?: string, limit = 1000): DeadLetter[] {
    return this.deadLetters.list(sink, limit);
  }

  /** Counts of dead letters per sink. */
  deadLetterCounts(): Map<string, { batches: number; entries: number }> {
    return this.deadLetters.countsBySink();
  }

  /** Deletes dead letters by id. */
  deleteDeadLetters(ids: readonly number[]): number {
    return this.deadLetters.delete(ids);
  }

  /** Marks dead letters (all, or one sink's) for a running daemon to send again. Returns how many. */
  requestReplay(sink?: string): number {
    return this.deadLetters.requestReplay(sink);
  }

  /** Clears the replay mark of a dead letter whose replay failed, recording the new error. */
  keepDeadLetter(id: number, error: string): void {
    this.deadLetters.keepForLater(id, error);
  }

  /** The oldest dead letter of `sink` marked for replay, if any. */
  nextReplay(sink: string): DeadLetter | undefined {
    return this.deadLetters.nextReplay(sink);
  }

  /** Runs SQLite's integrity check; returns the problems found (empty when healthy). */
  integrityCheck(): string[] {
    return integrityCheck(this.state.db);
  }

  /** Closes the database, writing the windows that returned nothing first. Idempotent. */
  close(): void {
    if (this.state.closed) return;
    this.checkpoints.close();
    this.state.close();
  }
}
