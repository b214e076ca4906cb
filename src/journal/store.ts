//! The state file: one SQLite database (WAL, synchronous=FULL) holding per-model
//! checkpoints, dedupe counts, the journal of new entries, per-sink cursors and the
//! dead-letter table. Every page of logs is committed in one transaction together
//! with the checkpoint, so the checkpoint never moves ahead of durable entries. Sinks
//! read only entries already on disk: the daemon commits pages without waiting for the
//! disk and syncs the WAL in the background (see group-commit.ts and durableSeq).
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fdatasync, fdatasyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StateError, describeError, describeFileError } from '../errors.js';
import type { SinkEntry } from '../records/entry.js';
import { EntryObjectsPage, type PreparedEntry, type PreparedPage } from './prepared.js';
import { JournalPage, packTimes, sliceEntries, unpackTimes, type PageSlice } from './pages.js';
import { BUCKET_MS, PackedBucket, bucketOfHalves, hashWords } from '../dedupe/buckets.js';
import { MIGRATIONS } from './migrations.js';

type DB = Database.Database;
type Stmt = Database.Statement;

/** Where polling of one model stands. */
export interface Checkpoint {
  modelId: string;
  startMs: number;
  watermarkMs: number | undefined;
  window: { fromMs: number; toMs: number; nextToken: string | undefined; tokens?: readonly string[] } | undefined;
  fetchId: number;
  planState: string | undefined;
  lastEntryNs: bigint | undefined;
  /** The `start_at` setting (as written) the stored start answers to; undefined in files of earlier versions. */
  startAt: string | undefined;
  updatedMs: number;
}

export type { PreparedEntry, PreparedPage } from './prepared.js';

/** A window not yet recorded: the first page's transaction records it (saving a commit per window). */
export interface WindowStart {
  fromMs: number;
  toMs: number;
  planStateAfter?: string | undefined;
}

/** A page to commit: the arguments of {@link StateStore.commitPage}. */
export interface PageToCommit {
  modelId: string;
  fetchId: number;
  windowFromMs: number;
  entries: PreparedPage | readonly PreparedEntry[];
  next: PageContinuation;
  fetchedMs: number;
  begin?: WindowStart | undefined;
}

/** A page inside {@link StateStore.commitPages}: what its transaction produced. */
interface PendingPage {
  p: PageToCommit;
  result: PageCommit;
  quiet: Checkpoint | undefined;
  addedBytes: number;
  page: JournalPage | undefined;
}

/**
 * How a page ends its window fetch. `tokenHash` (hex) is added to the window's set of
 * tokens followed, in the same transaction that stores the token.
 */
export type PageContinuation = { nextToken: string; tokenHash?: string } | { end: true };

/** Result of committing one page. */
export interface PageCommit {
  appended: number;
  duplicates: number;
  firstSeq: number | undefined;
  lastSeq: number | undefined;
}

/** A batch sent but not acknowledged: its seq range and the key it was sent under. */
export interface InflightBatch {
  firstSeq: number;
  lastSeq: number;
  /** Its batch id (Idempotency-Key); undefined for a batch recorded by schema 4 or earlier. */
  key: string | undefined;
}

/** A sink's row. */
export interface SinkCursor {
  name: string;
  cursor: number;
  state: string | undefined;
  /** The oldest batch sent but not acknowledged, if any. */
  inflight: InflightBatch | undefined;
  /** Every batch sent but not acknowledged, oldest first. */
  inflightRanges: InflightBatch[];
  delivered: number;
  dropped: number;
}

/** A dead-lettered batch. */
export interface DeadLetter {
  id: number;
  sink: string;
  firstSeq: number;
  lastSeq: number;
  count: number;
  error: string;
  createdMs: number;
  entries: SinkEntry[];
}

/** Options of {@link StateStore.open}. */
export interface StoreOptions {
  now?: () => number;
  /** Open read-only (status, inspection): no migrations, no writes. */
  readonly?: boolean;
  /** How long windows that returned nothing may wait before they are written together (ms; default 1000). */
  quietFlushMs?: number;
  /** How the WAL is synced (default: `fdatasync` of `node:fs`; tests hold a sync back or fail it). */
  walSync?: WalSync;
}

/** The two ways the store syncs its WAL file to disk. */
export interface WalSync {
  /** On libuv's thread pool, after commits made with `sync: false`. */
  background(fd: number, done: (err: NodeJS.ErrnoException | null) => void): void;
  /** At open, for what a crashed process left unsynced. */
  now(fd: number): void;
}

const FS_WAL_SYNC: WalSync = { background: fdatasync, now: fdatasyncSync };

/**
 * Recent journal pages kept in memory (bytes of NDJSON). Sinks read pages right after
 * they are committed; a sink that falls behind while pages keep coming reads them from
 * here rather than from the file, up to this much.
 */
const PAGE_CACHE_BYTES = 8 * 1024 * 1024;

/** Bytes a journal row takes per entry besides its NDJSON line (the packed time). */
const TIME_BYTES = 8;

/**
 * Page size of new state files. A page's journal row (about 200 KB per 1,000 entries) and
 * the dedupe blobs (about 7 KB per second of entry time) then take a quarter of the pages,
 * WAL frames and system calls they take with SQLite's default 4 KB: the commit path costs
 * about 15 % less.
 */
const PAGE_SIZE = 16_384;

/** The daemon's state file. Synchronous (better-sqlite3); one instance per process. */
export class StateStore {
  readonly path: string;
  private readonly db: DB;
  private readonly now: () => number;
  private readonly stmts: ReturnType<StateStore['prepare']> | undefined;
  private journalCount = 0;
  private journalBytes = 0;
  private lastSeqValue = 0;
  /** Highest seq known to be on disk: sinks read no further (see {@link StateStore.syncJournal}). */
  private durableSeqValue = 0;
  /** The WAL, opened read-only for `fdatasync` (see {@link StateStore.syncJournal}). */
  private walFd: number | undefined;
  private syncing = false;
  /** Set once a sync of the WAL failed: from then on nothing more is written. */
  private syncFailure: StateError | undefined;
  /** Journal rows read or written lately, most recently used last: sinks read the same pages one after another. */
  private readonly decoded = new Map<number, JournalPage>();
  /** Bytes of NDJSON held in `decoded`, kept under {@link PAGE_CACHE_BYTES}. */
  private decodedBytes = 0;
  /** Checkpoints as last written by this process (the only writer: see lock.ts). */
  private readonly checkpoints = new Map<string, Checkpoint>();
  /**
   * Models whose cached checkpoint is ahead of the file by windows that returned nothing
   * (see {@link StateStore.commitPage}); the cached checkpoint is what gets written.
   */
  private readonly quiet = new Set<string>();
  private quietTimer: NodeJS.Timeout | undefined;
  private readonly quietFlushMs: number;
  private readonly walSync: WalSync;
  private closed = false;
  /**
   * Random id of this state file, made when the file is created (or first opened by a
   * version that has it): part of every batch id, so two installations, or a state file
   * started afresh, never send different batches under one Idempotency-Key. Undefined
   * only for a file opened read-only that no such version has written yet.
   */
  readonly installationId: string | undefined;
  private readonly listInflightSql: string;

  private constructor(path: string, db: DB, options: StoreOptions) {
    this.path = path;
    this.db = db;
    this.now = options.now ?? Date.now;
    this.quietFlushMs = options.quietFlushMs ?? 1_000;
    this.walSync = options.walSync ?? FS_WAL_SYNC;
    if (!options.readonly) this.stmts = this.prepare();
    const row = this.db.prepare('SELECT coalesce(sum(count), 0) AS n, coalesce(sum(bytes), 0) AS b, coalesce(max(last_seq), 0) AS m FROM journal').get() as { n: number; b: number; m: number };
    this.journalCount = row.n;
    this.journalBytes = row.b;
    const meta = this.db.prepare("SELECT value FROM meta WHERE key = 'last_seq'").get() as { value: string } | undefined;
    this.lastSeqValue = Math.max(row.m, meta ? Number(meta.value) : 0);
    if (!options.readonly) {
      // A process that crashed may have left commits in the WAL that were never synced
      // (see syncJournal): they are in the kernel's cache, not yet on disk. Sync them before
      // any sink reads them.
      const wal = `${path}-wal`;
      if (existsSync(wal)) {
        this.walFd = openSync(wal, 'r');
        this.walSync.now(this.walFd);
      }
    }
    this.durableSeqValue = this.lastSeqValue;
    if (!options.readonly) this.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('installation_id', ?)").run(randomUUID());
    this.installationId = this.db.prepare("SELECT value FROM meta WHERE key = 'installation_id'").pluck().get() as string | undefined;
    // A file opened read-only is not migrated: one of schema 4 or earlier has no batch keys.
    this.listInflightSql = (this.db.pragma('user_version', { simple: true }) as number) >= 5 ? LIST_INFLIGHT : LIST_INFLIGHT_V4;
  }

  /**
   * Opens (creating with mode 0600 in a 0700 folder if needed) and migrates the state
   * file. A file that is not a usable SQLite database raises a StateError that names it
   * and says how to recover.
   */
  static open(path: string, options: StoreOptions = {}): StateStore {
    let db: DB | undefined;
    try {
      if (!options.readonly) {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        closeSync(openSync(path, 'a', 0o600));
      }
      db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
      db.pragma('busy_timeout = 5000');
      if (!options.readonly) {
        // Only a new, empty file takes it; an existing file keeps its page size.
        db.pragma(`page_size = ${PAGE_SIZE}`);
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        migrate(db);
      } else {
        db.prepare('SELECT count(*) FROM sqlite_master').get();
      }
      return new StateStore(path, db, options);
    } catch (err) {
      db?.close();
      if (err instanceof StateError) throw err;
      const code = (err as { code?: string }).code ?? '';
      if (/SQLITE_(CORRUPT|NOTADB)/.test(code)) {
        throw new StateError(
          'MLS_ERR_STATE_CORRUPT',
          `state file ${path} is corrupt (${describeError(err)}); run 'mls state check --config <file>' for details, ` +
            `then restore it from a backup or move it aside to start over (the daemon will re-read logs from start_at)`,
          { cause: err },
        );
      }
      throw new StateError('MLS_ERR_STATE_OPEN', describeFileError('cannot open the state file', path, err, 'state.path'), { cause: err });
    }
  }

  private prepare() {
    const db = this.db;
    return {
      getCheckpoint: db.prepare('SELECT * FROM checkpoints WHERE model_id = ?').safeIntegers(true),
      insertCheckpoint: db.prepare('INSERT OR IGNORE INTO checkpoints (model_id, start_ms, start_at, updated_ms) VALUES (?, ?, ?, ?)'),
      setStartAt: db.prepare('UPDATE checkpoints SET start_at = ? WHERE model_id = ?'),
      beginWindow: db.prepare(
        'UPDATE checkpoints SET win_from = ?, win_to = ?, plan_pending = ?, next_token = NULL, win_tokens = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ?',
      ),
      syncNormal: db.prepare('PRAGMA synchronous = NORMAL'),
      syncFull: db.prepare('PRAGMA synchronous = FULL'),
      restartWindow: db.prepare('UPDATE checkpoints SET next_token = NULL, win_tokens = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ?'),
      shortenWindow: db.prepare(
        'UPDATE checkpoints SET win_to = ?, plan_pending = ?, next_token = NULL, win_tokens = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ? AND win_from IS NOT NULL',
      ),
      recordWindow: db.prepare('UPDATE checkpoints SET win_from = ?, win_to = ?, plan_pending = ?, next_token = NULL, win_tokens = NULL, fetch_id = ?, updated_ms = ? WHERE model_id = ?'),
      setToken: db.prepare(
        `UPDATE checkpoints SET next_token = @token, win_tokens = CASE WHEN @hash IS NULL THEN win_tokens ELSE coalesce(win_tokens || ' ', '') || @hash END,
           updated_ms = @now WHERE model_id = @modelId`,
      ),
      endWindow: db.prepare(
        `UPDATE checkpoints SET watermark_ms = max(coalesce(watermark_ms, win_to), win_to), plan_state = coalesce(plan_pending, plan_state),
           plan_pending = NULL, win_from = NULL, win_to = NULL, next_token = NULL, win_tokens = NULL, updated_ms = ? WHERE model_id = ?`,
      ),
      setLastEntry: db.prepare('UPDATE checkpoints SET last_entry_ns = max(coalesce(last_entry_ns, ?), ?) WHERE model_id = ?'),
      endQuiet: db.prepare(
        `UPDATE checkpoints SET watermark_ms = max(coalesce(watermark_ms, @toMs), coalesce(@toMs, watermark_ms)), plan_state = coalesce(@planState, plan_state),
           fetch_id = max(fetch_id, @fetchId), updated_ms = @now WHERE model_id = @modelId AND win_from IS NULL`,
      ),
      getBucket: db.prepare('SELECT keys FROM dedupe WHERE model_id = ? AND bucket_ms = ?').pluck(true),
      putBucket: db.prepare(
        `INSERT INTO dedupe (model_id, bucket_ms, touched_ms, keys) VALUES (?, ?, ?, ?)
         ON CONFLICT (model_id, bucket_ms) DO UPDATE SET keys = excluded.keys, touched_ms = max(touched_ms, excluded.touched_ms)`,
      ),
      pruneKeys: db.prepare('DELETE FROM dedupe WHERE model_id = ? AND bucket_ms < ? AND touched_ms < ?'),
      append: db.prepare('INSERT INTO journal (first_seq, last_seq, model_id, count, bytes, fetched_ms, entries, times) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      setLastSeq: db.prepare("INSERT INTO meta (key, value) VALUES ('last_seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
      rowsFrom: db.prepare(
        'SELECT first_seq, last_seq, model_id, fetched_ms FROM journal WHERE first_seq >= coalesce((SELECT max(first_seq) FROM journal WHERE first_seq <= ?), 0) ORDER BY first_seq LIMIT 64',
      ),
      rowEntries: db.prepare('SELECT entries, times FROM journal WHERE first_seq = ?'),
      getSink: db.prepare('SELECT * FROM sinks WHERE name = ?'),
      insertSink: db.prepare('INSERT OR IGNORE INTO sinks (name, cursor, updated_ms) VALUES (?, ?, ?)'),
      addInflight: db.prepare('INSERT OR REPLACE INTO inflight (sink, first_seq, last_seq, batch_key) VALUES (?, ?, ?, ?)'),
      listInflight: db.prepare(LIST_INFLIGHT),
      clearInflight: db.prepare('DELETE FROM inflight WHERE sink = ? AND last_seq <= ?'),
      ack: db.prepare('UPDATE sinks SET cursor = max(cursor, ?), state = coalesce(?, state), delivered = delivered + ?, updated_ms = ? WHERE name = ?'),
      setSinkState: db.prepare('UPDATE sinks SET state = ?, updated_ms = ? WHERE name = ?'),
      minCursor: db.prepare('SELECT min(cursor) AS c FROM sinks'),
      sumBelow: db.prepare('SELECT coalesce(sum(count), 0) AS n, coalesce(sum(bytes), 0) AS b FROM journal WHERE first_seq <= ? AND last_seq <= ?'),
      deleteBelow: db.prepare('DELETE FROM journal WHERE first_seq <= ? AND last_seq <= ?'),
      oldestRows: db.prepare('SELECT first_seq AS firstSeq, last_seq AS lastSeq, count, bytes FROM journal ORDER BY first_seq'),
      insertDlq: db.prepare(
        'INSERT INTO dlq (sink, first_seq, last_seq, count, error, created_ms, entries) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
    };
  }

  private get s() {
    if (!this.stmts) throw new StateError('MLS_ERR_STATE_READONLY', `state file ${this.path} is open read-only`);
    if (this.closed) throw new StateError('MLS_ERR_STATE_CLOSED', `state file ${this.path} is closed`);
    if (this.syncFailure) throw this.syncFailure;
    return this.stmts;
  }

  // ---- checkpoints -------------------------------------------------------------------

  /** The checkpoint of a model, if it was ever seen. */
  getCheckpoint(modelId: string): Checkpoint | undefined {
    const cached = this.checkpoints.get(modelId);
    if (cached) return cached;
    const stmt = this.stmts?.getCheckpoint ?? this.db.prepare('SELECT * FROM checkpoints WHERE model_id = ?').safeIntegers(true);
    const row = stmt.get(modelId) as Record<string, bigint | string | null> | undefined;
    if (!row) return undefined;
    const cp = toCheckpoint(row);
    if (this.stmts) this.checkpoints.set(modelId, cp);
    return cp;
  }

  /** All checkpoints (for status). */
  listCheckpoints(): Checkpoint[] {
    if (this.stmts) this.flushQuiet();
    const rows = this.db.prepare('SELECT * FROM checkpoints ORDER BY model_id').safeIntegers(true).all() as Record<string, bigint | string | null>[];
    return rows.map(toCheckpoint);
  }

  /** Returns the model's checkpoint, creating it with `startMs` when the model is new. */
  ensureCheckpoint(modelId: string, startMs: number, startAt?: string): Checkpoint {
    this.s.insertCheckpoint.run(modelId, Math.floor(startMs), startAt ?? null, this.now());
    return this.getCheckpoint(modelId)!;
  }
  /** Records the `start_at` setting (as written) that the model's stored start now answers to. */
  recordStartAt(modelId: string, startAt: string): void {
    this.uncache(modelId);
    this.s.setStartAt.run(startAt, modelId);
  }


  /**
   * Starts a new fetch of window [fromMs, toMs]: a fresh fetch id and no token.
   * `planStateAfter` is the planner state to adopt once the window has been fetched to
   * the end; it is applied in the transaction of the last page.
   */
  beginWindow(modelId: string, fromMs: number, toMs: number, planStateAfter?: string): Checkpoint {
    this.uncache(modelId);
    this.s.beginWindow.run(Math.floor(fromMs), Math.ceil(toMs), planStateAfter ?? null, this.now(), modelId);
    return this.getCheckpoint(modelId)!;
  }

  /** Restarts the window in progress from its first page (new fetch id, no token). */
  restartWindow(modelId: string): Checkpoint {
    this.uncache(modelId);
    this.s.restartWindow.run(this.now(), modelId);
    return this.getCheckpoint(modelId)!;
  }

  /**
   * Cuts the window in progress short at `toMs` and starts fetching it again from its first
   * page: a new fetch id, no token, no tokens followed. `planStateAfter` replaces the planner
   * state to adopt when the window completes (it must cover only the shorter window).
   */
  shortenWindow(modelId: string, toMs: number, planStateAfter?: string): Checkpoint {
    this.uncache(modelId);
    this.s.shortenWindow.run(Math.ceil(toMs), planStateAfter ?? null, this.now(), modelId);
    return this.getCheckpoint(modelId)!;
  }

  /** Drops a model's cached checkpoint before a write changes it, writing it first if it is ahead of the file. */
  private uncache(modelId: string): void {
    if (this.quiet.has(modelId)) this.flushQuiet();
    this.checkpoints.delete(modelId);
  }

  /**
   * Commits one page of window fetch `fetchId`, in one transaction: the new entries
   * (by occurrence counts), the dedupe counts, and the token of the next page or the end
   * of the window (moving the watermark to the window's end).
   *
   * A window that is one empty page (an idle model's usual poll) changes only the
   * checkpoint. Such updates are kept in memory and written together, one transaction
   * for all models, within `quietFlushMs`, or earlier with the model's next write. A crash
   * in between makes the daemon read those windows again, which returns nothing new.
   */
  commitPage(
    modelId: string,
    fetchId: number,
    windowFromMs: number,
    entries: readonly PreparedEntry[],
    next: PageContinuation,
    fetchedMs: number,
    begin?: WindowStart,
  ): PageCommit {
    return this.commitPages([{ modelId, fetchId, windowFromMs, entries, next, fetchedMs, begin }])[0]!;
  }

  /**
   * Commits pages, each as {@link StateStore.commitPage} does, in one transaction: pages of
   * several models that arrived together share one fsync. Seqs follow the order of `pages`.
   * If the transaction fails, none of them is committed. With `sync: false` the transaction
   * does not wait for the disk: its entries reach sinks only after {@link StateStore.syncJournal}.
   */
  commitPages(pages: readonly PageToCommit[], options: { sync?: boolean } = {}): PageCommit[] {
    void this.s; // refuses a read-only or closed store before anything changes
    const results: PageCommit[] = pages.map(() => ({ appended: 0, duplicates: 0, firstSeq: undefined, lastSeq: undefined }));
    const work: PendingPage[] = [];
    for (let i = 0; i < pages.length; i++) {
      const p = pages[i]!;
      if (p.entries.length === 0 && p.begin && 'end' in p.next) this.deferQuiet(p.modelId, p.begin, p.fetchId);
      else work.push({ p, result: results[i]!, quiet: this.quiet.has(p.modelId) ? this.checkpoints.get(p.modelId) : undefined, addedBytes: 0, page: undefined });
    }
    if (work.length === 0) return results;
    let lastSeq = this.lastSeqValue;
    const commit = this.db.transaction(() => {
      lastSeq = this.lastSeqValue;
      for (const w of work) lastSeq = this.applyPage(w, lastSeq);
    });
    if (options.sync === false || work.every((w) => w.p.entries.length === 0)) {
      // The caller syncs later (syncJournal), or the pages are empty: an empty page only
      // moves the token or the watermark, and if power loss undid it the window would just
      // be read again. Such commits skip the fsync (polling idle models would otherwise cost
      // one fsync per request); a later synced commit syncs them too.
      this.unsynced(commit);
    } else {
      commit.immediate();
      this.durableSeqValue = lastSeq;
    }
    // Only now: if the commit failed, the cached checkpoints (and quiet ones' unwritten state) still hold.
    for (const w of work) {
      this.checkpoints.delete(w.p.modelId);
      this.quiet.delete(w.p.modelId);
      this.journalCount += w.result.appended;
      this.journalBytes += w.addedBytes;
      // Sinks read a page right after it is committed: keep it.
      if (w.page) this.remember(w.page);
    }
    this.lastSeqValue = lastSeq;
    return results;
  }

  /** Writes one page inside the caller's transaction; returns the last seq given out. */
  private applyPage(w: PendingPage, lastSeq: number): number {
    const s = this.s;
    const { modelId, fetchId, windowFromMs, entries, next, fetchedMs, begin } = w.p;
    const { quiet, result } = w;
    if (quiet) s.endQuiet.run(quietRow(quiet, this.now()));
    if (begin) s.recordWindow.run(Math.floor(begin.fromMs), Math.ceil(begin.toMs), begin.planStateAfter ?? null, fetchId, this.now(), modelId);
    const first = lastSeq + 1;
    const page = Array.isArray(entries) ? EntryObjectsPage.of(entries as readonly PreparedEntry[]) : (entries as PreparedPage);
    const count = page.length;
    const { timesNs, hashes } = page;
    // Times as the halves of their int64: no bigint per entry on the way through the dedupe.
    const halves = new Uint32Array(timesNs.buffer, timesNs.byteOffset, 2 * count);
    const kept = new Uint32Array(count);
    const times = new BigInt64Array(count);
    const keptHalves = new Uint32Array(times.buffer);
    const buckets = new Map<number, PackedBucket>();
    let bucketMs = NaN;
    let bucket: PackedBucket | undefined;
    let latest = -1;
    let n = 0;
    for (let i = 0; i < count; i++) {
      const lo = halves[2 * i]!;
      const hi = halves[2 * i + 1]!;
      if (latest < 0 || (hi | 0) > (halves[2 * latest + 1]! | 0) || ((hi | 0) === (halves[2 * latest + 1]! | 0) && lo > halves[2 * latest]!)) latest = i;
      const b = bucketOfHalves(lo, hi | 0);
      if (b !== bucketMs) {
        bucketMs = b;
        bucket = buckets.get(b);
        if (!bucket) {
          // Room for the rest of the page: a page of one busy second then never regrows the bucket.
          bucket = PackedBucket.decode(s.getBucket.get(modelId, b) as Uint8Array | undefined, count - i);
          buckets.set(b, bucket);
        }
      }
      // A bucket written before the current content hash keeps the hash it was keyed by.
      const h = hashWords(bucket!.legacy ? page.legacyHash(i) : hashes[i]!);
      if (bucket!.count(bucket!.find(lo, hi, h[0]!, h[1]!, fetchId), fetchId)) {
        kept[n] = i;
        keptHalves[2 * n] = lo;
        keptHalves[2 * n + 1] = hi;
        n++;
      } else {
        result.duplicates++;
      }
    }
    // A bucket reaching before the window holds keys the service returned although they were
    // not asked for, and may return again with any later window: it counts as touched at the
    // window's end, so pruning keeps it until lookback after the last window that returned it.
    // Buckets inside the window keep its start and go as soon as no window can reach them.
    let touchedBefore: number | undefined;
    for (const [b, bucket] of buckets) {
      const touched = b < windowFromMs ? (touchedBefore ??= this.windowEndMs(modelId, begin) ?? windowFromMs) : windowFromMs;
      s.putBucket.run(modelId, b, touched, bucket.encode());
    }
    if (n > 0) {
      const last = first + n - 1;
      const keptTimes = times.subarray(0, n);
      const bytes = page.render(modelId, kept, n);
      w.addedBytes = bytes.length + n * TIME_BYTES;
      s.append.run(first, last, modelId, n, w.addedBytes, fetchedMs, bytes, packTimes(keptTimes));
      result.firstSeq = first;
      result.lastSeq = last;
      result.appended = n;
      w.page = new JournalPage(first, modelId, fetchedMs, bytes, keptTimes);
      lastSeq = last;
    }
    if (latest >= 0) {
      const maxNs = timesNs[latest]!;
      s.setLastEntry.run(maxNs, maxNs, modelId);
    }
    if ('end' in next) s.endWindow.run(this.now(), modelId);
    else s.setToken.run({ token: next.nextToken, hash: next.tokenHash ?? null, now: this.now(), modelId });
    return lastSeq;
  }

  /** The end of the window a page belongs to: the window it begins, or the one in progress. */
  private windowEndMs(modelId: string, begin: WindowStart | undefined): number | undefined {
    const to = begin?.toMs ?? this.getCheckpoint(modelId)?.window?.toMs;
    return to === undefined ? undefined : Math.ceil(to);
  }

  private deferQuiet(modelId: string, begin: WindowStart, fetchId: number): void {
    const cp = this.getCheckpoint(modelId);
    if (!cp) throw new StateError('MLS_ERR_STATE_NO_CHECKPOINT', `no checkpoint for model ${modelId}`);
    const toMs = Math.ceil(begin.toMs);
    this.checkpoints.set(modelId, {
      ...cp,
      watermarkMs: Math.max(cp.watermarkMs ?? toMs, toMs),
      window: undefined,
      fetchId: Math.max(cp.fetchId, fetchId),
      planState: begin.planStateAfter ?? cp.planState,
      updatedMs: this.now(),
    });
    this.quiet.add(modelId);
    this.quietTimer ??= setTimeout(() => this.flushQuietSoon(), this.quietFlushMs).unref();
  }

  private flushQuietSoon(): void {
    this.quietTimer = undefined;
    try {
      this.flushQuiet();
    } catch {
      // Kept in memory and tried again; the model's next write or close() also writes it.
      if (!this.closed && this.quiet.size > 0) this.quietTimer = setTimeout(() => this.flushQuietSoon(), this.quietFlushMs).unref();
    }
  }

  /**
   * Writes the checkpoint updates of windows that returned nothing, in one transaction
   * (without fsync: losing them only makes the same empty windows be read again).
   */
  flushQuiet(): void {
    if (this.quiet.size === 0 || this.closed || !this.stmts) return;
    const s = this.s;
    const now = this.now();
    this.unsynced(() => {
      for (const modelId of this.quiet) s.endQuiet.run(quietRow(this.checkpoints.get(modelId)!, now));
    });
    this.quiet.clear();
  }

  /**
   * Forgets dedupe keys that no future window can reach: buckets wholly older than the
   * horizon, unless a window returned them lately (a bucket dated before the window that
   * returned it counts as touched at that window's end). Returns the buckets removed.
   */
  pruneKeys(modelId: string, horizonMs: number): number {
    const h = Math.floor(horizonMs);
    return this.s.pruneKeys.run(modelId, h - BUCKET_MS, h).changes;
  }

  // ---- journal -----------------------------------------------------------------------

  /** Rows and approximate bytes currently in the journal. */
  journalSize(): { entries: number; bytes: number } {
    return { entries: this.journalCount, bytes: this.journalBytes };
  }

  /** Highest seq ever assigned (0 when none). */
  lastSeq(): number {
    if (this.stmts) return this.lastSeqValue;
    const row = this.db.prepare("SELECT max(coalesce((SELECT max(last_seq) FROM journal), 0), coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_seq'), 0)) AS s").get() as { s: number };
    return row.s;
  }

  /** Highest seq whose entries are on disk: what sinks may read. */
  durableSeq(): number {
    return this.stmts ? this.durableSeqValue : this.lastSeq();
  }

  /**
   * Makes every commit so far durable: an `fdatasync` of the WAL on libuv's thread pool.
   * Commits made with `sync: false` are in the WAL (a crash of the process cannot undo them)
   * but may not be on disk; sinks read only up to the seq this last made durable. The WAL
   * only ever loses a suffix of commits, so a page and its checkpoint stand or fall together.
   * The caller must not commit while the sync runs: writes to a file being synced wait for it.
   * A failed sync is final (the kernel may have dropped the pages): every later write throws.
   */
  syncJournal(): Promise<void> {
    void this.s;
    const seq = this.lastSeqValue;
    if (this.syncing) throw new Error('syncJournal: a sync is already running');
    this.walFd ??= openSync(`${this.path}-wal`, 'r');
    const fd = this.walFd;
    this.syncing = true;
    return new Promise((resolve, reject) => {
      this.walSync.background(fd, (err) => {
        this.syncing = false;
        if (this.closed) this.closeWal();
        if (err) {
          this.syncFailure = new StateError('MLS_ERR_STATE_SYNC', `could not sync the state file ${this.path} to disk (${describeError(err)}); restart mls to recover from the file`, { cause: err });
          reject(this.syncFailure);
          return;
        }
        this.durableSeqValue = Math.max(this.durableSeqValue, seq);
        resolve();
      });
    });
  }

  private closeWal(): void {
    if (this.walFd === undefined || this.syncing) return;
    closeSync(this.walFd);
    this.walFd = undefined;
  }

  /** Up to `limit` entries after `afterSeq`, stopping early once `maxBytes` is reached. */
  readAfter(afterSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): SinkEntry[] {
    return sliceEntries(this.slicesAfter(afterSeq, limit, maxBytes));
  }

  /** The entries with seq in [firstSeq, lastSeq] that are still in the journal. */
  readRange(firstSeq: number, lastSeq: number): SinkEntry[] {
    return sliceEntries(this.slicesOfRange(firstSeq, lastSeq));
  }

  /**
   * The journal after `afterSeq` as page slices: up to `limit` entries, stopping early once
   * their NDJSON lines reach `maxBytes` bytes (at least one entry is always taken).
   */
  slicesAfter(afterSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): PageSlice[] {
    const out: PageSlice[] = [];
    const durable = this.durableSeq();
    if (afterSeq >= durable) return out;
    let count = 0;
    let bytes = 0;
    for (const page of this.pagesFrom(afterSeq + 1)) {
      if (page.firstSeq > durable) break;
      const from = Math.max(0, afterSeq + 1 - page.firstSeq);
      const end = Math.min(page.count, durable - page.firstSeq + 1);
      if (from >= end) continue;
      let to = Math.min(end, from + limit - count);
      let size = page.size(from, to);
      if (bytes + size > maxBytes) {
        // Cut inside the page: as many whole lines as fit, and never nothing at all.
        const starts = page.starts();
        const budget = maxBytes - bytes;
        to = from;
        while (to < end && starts[to + 1]! - starts[from]! <= budget) to++;
        if (to === from && count === 0) to = from + 1;
        size = page.size(from, to);
      }
      if (to > from) {
        out.push({ page, from, to });
        count += to - from;
        bytes += size;
      }
      if (count >= limit || to < page.count) break;
    }
    return out;
  }

  /** The entries with seq in [firstSeq, lastSeq] that are still in the journal, as page slices. */
  slicesOfRange(firstSeq: number, lastSeq: number): PageSlice[] {
    const out: PageSlice[] = [];
    for (const page of this.pagesFrom(firstSeq)) {
      if (page.firstSeq > lastSeq) break;
      const from = Math.max(0, firstSeq - page.firstSeq);
      const to = Math.min(page.count, lastSeq - page.firstSeq + 1);
      if (to > from) out.push({ page, from, to });
    }
    return out;
  }

  private remember(page: JournalPage): void {
    this.forget(page.firstSeq);
    this.decoded.set(page.firstSeq, page);
    this.decodedBytes += page.bytes.length;
    while (this.decodedBytes > PAGE_CACHE_BYTES && this.decoded.size > 1) this.forget(this.decoded.keys().next().value!);
  }

  private forget(firstSeq: number): void {
    const page = this.decoded.get(firstSeq);
    if (!page) return;
    this.decoded.delete(firstSeq);
    this.decodedBytes -= page.bytes.length;
  }

  /** Journal pages from the one holding `seq` on, oldest first. */
  private *pagesFrom(seq: number): Generator<JournalPage> {
    const stmt =
      this.stmts?.rowsFrom ??
      this.db.prepare('SELECT first_seq, last_seq, model_id, fetched_ms FROM journal WHERE first_seq >= coalesce((SELECT max(first_seq) FROM journal WHERE first_seq <= ?), 0) ORDER BY first_seq LIMIT 64');
    const entriesOf = this.stmts?.rowEntries ?? this.db.prepare('SELECT entries, times FROM journal WHERE first_seq = ?');
    // Row headers 64 at a time; a page's text is read only when not cached.
    let rows = stmt.all(seq) as JournalRow[];
    while (rows.length > 0) {
      for (const row of rows) yield this.decode(row, entriesOf);
      const next = rows[rows.length - 1]!.last_seq + 1;
      rows = (stmt.all(next) as JournalRow[]).filter((r) => r.first_seq >= next);
    }
  }

  private decode(row: JournalRow, entriesOf: Stmt): JournalPage {
    let page = this.decoded.get(row.first_seq);
    if (!page) {
      const stored = entriesOf.get(row.first_seq) as { entries: Buffer | string; times: Uint8Array | null } | undefined;
      if (stored?.times) {
        const bytes = typeof stored.entries === 'string' ? Buffer.from(stored.entries) : stored.entries;
        page = new JournalPage(row.first_seq, row.model_id, row.fetched_ms, bytes, unpackTimes(stored.times));
      } else {
        // A row written before rows held NDJSON: a JSON array of [time, time_ns, stream, log].
        const raw = JSON.parse(String(stored?.entries ?? '[]')) as Array<[string, string, string, string]>;
        const entries = raw.map((r, i) => ({ seq: row.first_seq + i, modelId: row.model_id, time: r[0], timeNs: BigInt(r[1]), stream: r[2], log: r[3], fetchedAtMs: row.fetched_ms }));
        page = JournalPage.fromEntries(row.first_seq, row.model_id, row.fetched_ms, entries);
      }
    }
    this.remember(page);
    return page;
  }

  /** Deletes rows every sink has passed. Returns the number deleted. */
  trimJournal(): number {
    const min = (this.s.minCursor.get() as { c: number | null }).c;
    if (min === null) return 0;
    return this.deleteThrough(min).n;
  }

  private deleteThrough(seq: number): { n: number; b: number } {
    const s = this.s;
    let res = { n: 0, b: 0 };
    // Unsynced: rows every sink has passed that come back after a power loss are deleted again.
    this.unsynced(() => {
      const sum = s.sumBelow.get(seq, seq) as { n: number; b: number };
      if (sum.n > 0) {
        // The highest seq given out is the last row's last_seq; before rows go, it is kept in
        // meta, so seqs never go backwards even once the journal is empty. Written here
        // rather than with every page: one small page less in each commit's WAL frames. The
        // WAL keeps commits in order, so a power loss that undoes this also undoes the delete.
        s.setLastSeq.run(String(this.lastSeqValue));
        s.deleteBelow.run(seq, seq);
      }
      res = sum;
    });
    for (const first of [...this.decoded.keys()]) if (first <= seq) this.forget(first);
    this.journalCount -= res.n;
    this.journalBytes -= res.b;
    return res;
  }

  /**
   * Makes room by dropping the oldest `entries` rows (or enough rows to free `bytes`):
   * lagging cursors are moved past them and each sink's drop count grows by the rows it
   * had not yet delivered. Returns the entries dropped per sink.
   */
  dropOldest(entries: number, bytes = 0): Map<string, number> {
    const s = this.s;
    const dropped = new Map<string, number>();
    let through: number | undefined;
    let oldest: number | undefined;
    let freedEntries = 0;
    let freedBytes = 0;
    for (const r of s.oldestRows.iterate() as IterableIterator<{ firstSeq: number; lastSeq: number; count: number; bytes: number }>) {
      if (freedEntries >= entries && freedBytes >= bytes) break;
      oldest ??= r.firstSeq;
      through = r.lastSeq;
      freedEntries += r.count;
      freedBytes += r.bytes;
    }
    if (through === undefined || oldest === undefined) return dropped;
    const last = through;
    const from = oldest;
    this.synced(() => {
      for (const sink of this.listSinks()) {
        if (sink.cursor < last) {
          const lost = last - Math.max(sink.cursor, from - 1);
          this.db.prepare('UPDATE sinks SET cursor = ?, dropped = dropped + ?, updated_ms = ? WHERE name = ?').run(last, lost, this.now(), sink.name);
          this.db.prepare('DELETE FROM inflight WHERE sink = ? AND first_seq <= ?').run(sink.name, last);
          if (lost > 0) dropped.set(sink.name, lost);
        }
      }
    });
    this.deleteThrough(last);
    return dropped;
  }

  // ---- sinks -------------------------------------------------------------------------

  /**
   * Returns a sink's cursor row, creating it when the sink is new. A new sink starts at
   * the journal's current end: it receives entries fetched from now on.
   */
  ensureSink(name: string): SinkCursor {
    this.s.insertSink.run(name, this.lastSeq(), this.now());
    return this.getSink(name)!;
  }

  /** A sink's cursor row. */
  getSink(name: string): SinkCursor | undefined {
    const stmt = this.stmts?.getSink ?? this.db.prepare('SELECT * FROM sinks WHERE name = ?');
    const row = stmt.get(name) as SinkRow | undefined;
    return row ? toSinkCursor(row, this.inflightOf(name)) : undefined;
  }

  /** All sink rows. */
  listSinks(): SinkCursor[] {
    return (this.db.prepare('SELECT * FROM sinks ORDER BY name').all() as SinkRow[]).map((r) => toSinkCursor(r, this.inflightOf(r.name)));
  }

  private inflightOf(name: string): InflightBatch[] {
    const stmt = this.stmts?.listInflight ?? this.db.prepare(this.listInflightSql);
    return (stmt.all(name) as Array<{ firstSeq: number; lastSeq: number; key: string | null }>).map((r) => ({ firstSeq: r.firstSeq, lastSeq: r.lastSeq, key: r.key ?? undefined }));
  }

  /** Removes the rows of sinks no longer configured, so they stop holding the journal. */
  removeSinksExcept(names: readonly string[]): string[] {
    const keep = new Set(names);
    const gone = this.listSinks().filter((s) => !keep.has(s.name)).map((s) => s.name);
    const del = this.db.prepare('DELETE FROM sinks WHERE name = ?');
    const delInflight = this.db.prepare('DELETE FROM inflight WHERE sink = ?');
    for (const n of gone) {
      del.run(n);
      delInflight.run(n);
    }
    return gone;
  }

  /**
   * Records the seq range of a batch about to be sent and the key it is sent under, so a
   * restart rebuilds the same batch and sends it under the same key.
   */
  setInflight(name: string, firstSeq: number, lastSeq: number, key: string): void {
    this.s.addInflight.run(name, firstSeq, lastSeq, key);
  }

  /**
   * Moves a sink's cursor after an acknowledged batch, with the sink's state, and forgets
   * the in-flight ranges it covers, in one transaction.
   *
   * The transaction does not wait for the disk (a process crash cannot undo it; WAL): it
   * becomes durable with the next synced commit, at the latest the next page of entries.
   * Power lost before then undoes the acknowledgement, and the sink gets those batches
   * again, which every sink already copes with: the file sink first cuts its files back
   * to the committed offsets, and other sinks see the same batch ids.
   */
  ack(name: string, lastSeq: number, delivered: number, state?: string): void {
    this.unsynced(() => {
      this.s.ack.run(lastSeq, state ?? null, delivered, this.now(), name);
      this.s.clearInflight.run(name, lastSeq);
    });
  }

  /**
   * Runs `fn` in a transaction committed without fsync (see {@link StateStore.ack}): in WAL
   * mode a process crash cannot undo it, and the next synced commit makes it durable.
   */
  private unsynced(fn: (() => void) | Database.Transaction<() => void>): void {
    const s = this.s;
    const tx = 'immediate' in fn ? fn : this.db.transaction(fn);
    s.syncNormal.run();
    try {
      tx.immediate();
    } finally {
      s.syncFull.run();
    }
  }

  /**
   * Runs `fn` in a transaction committed with fsync. Syncing the WAL makes every commit
   * before it durable too, so sinks may read up to the last seq given out.
   */
  private synced(fn: () => void): void {
    this.db.transaction(fn).immediate();
    this.durableSeqValue = this.lastSeqValue;
  }

  /** Stores a sink's state without moving its cursor. */
  setSinkState(name: string, state: string): void {
    this.s.setSinkState.run(state, this.now(), name);
  }

  // ---- dead letters ------------------------------------------------------------------

  /** Stores a rejected batch and moves the sink's cursor past it, in one transaction. */
  deadLetter(name: string, firstSeq: number, lastSeq: number, entries: readonly SinkEntry[], error: string): number {
    let id = 0;
    this.synced(() => {
      const json = JSON.stringify(entries.map((e) => ({ ...e, timeNs: e.timeNs.toString() })));
      id = Number(this.s.insertDlq.run(name, firstSeq, lastSeq, entries.length, error.slice(0, 2000), this.now(), json).lastInsertRowid);
      this.s.ack.run(lastSeq, null, 0, this.now(), name);
      this.s.clearInflight.run(name, lastSeq);
    });
    return id;
  }

  /** Dead letters, oldest first, optionally of one sink. */
  listDeadLetters(sink?: string, limit = 1000): DeadLetter[] {
    const rows = (sink === undefined
      ? this.db.prepare('SELECT * FROM dlq ORDER BY id LIMIT ?').all(limit)
      : this.db.prepare('SELECT * FROM dlq WHERE sink = ? ORDER BY id LIMIT ?').all(sink, limit)) as DlqRow[];
    return rows.map(toDeadLetter);
  }

  /** Counts of dead letters per sink. */
  deadLetterCounts(): Map<string, { batches: number; entries: number }> {
    const rows = this.db.prepare('SELECT sink, count(*) AS b, sum(count) AS e FROM dlq GROUP BY sink').all() as { sink: string; b: number; e: number }[];
    return new Map(rows.map((r) => [r.sink, { batches: r.b, entries: r.e }]));
  }

  /** Deletes dead letters by id. */
  deleteDeadLetters(ids: readonly number[]): number {
    const del = this.db.prepare('DELETE FROM dlq WHERE id = ?');
    let n = 0;
    this.db.transaction(() => {
      for (const id of ids) n += del.run(id).changes;
    }).immediate();
    return n;
  }

  /** Marks dead letters (all, or one sink's) for a running daemon to send again. Returns how many. */
  requestReplay(sink?: string): number {
    const stmt = sink === undefined ? this.db.prepare('UPDATE dlq SET replay = 1') : this.db.prepare('UPDATE dlq SET replay = 1 WHERE sink = ?');
    return (sink === undefined ? stmt.run() : stmt.run(sink)).changes;
  }

  /** Clears the replay mark of a dead letter whose replay failed, recording the new error. */
  keepDeadLetter(id: number, error: string): void {
    this.db.prepare('UPDATE dlq SET replay = 0, error = ? WHERE id = ?').run(error.slice(0, 2000), id);
  }

  /** The oldest dead letter of `sink` marked for replay, if any. */
  nextReplay(sink: string): DeadLetter | undefined {
    const row = this.db.prepare('SELECT * FROM dlq WHERE sink = ? AND replay = 1 ORDER BY id LIMIT 1').get(sink) as DlqRow | undefined;
    return row ? toDeadLetter(row) : undefined;
  }

  /** Runs SQLite's integrity check; returns the problems found (empty when healthy). */
  integrityCheck(): string[] {
    const rows = this.db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
  }

  /** Closes the database. Idempotent. */
  close(): void {
    if (this.closed) return;
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = undefined;
    try {
      this.flushQuiet();
    } catch {
      // Unwritten empty windows are read again at the next start.
    }
    this.closed = true;
    this.db.close();
    this.closeWal();
  }
}

interface JournalRow {
  first_seq: number;
  last_seq: number;
  model_id: string;
  fetched_ms: number;
}
interface SinkRow {
  name: string;
  cursor: number;
  state: string | null;
  delivered: number;
  dropped: number;
}
interface DlqRow {
  id: number;
  sink: string;
  first_seq: number;
  last_seq: number;
  count: number;
  error: string;
  created_ms: number;
  entries: string;
}

function toDeadLetter(r: DlqRow): DeadLetter {
  return {
    id: r.id,
    sink: r.sink,
    firstSeq: r.first_seq,
    lastSeq: r.last_seq,
    count: r.count,
    error: r.error,
    createdMs: r.created_ms,
    entries: (JSON.parse(r.entries) as (Omit<SinkEntry, 'timeNs'> & { timeNs: string })[]).map((e) => ({ ...e, timeNs: BigInt(e.timeNs) })),
  };
}

const LIST_INFLIGHT = 'SELECT first_seq AS firstSeq, last_seq AS lastSeq, batch_key AS key FROM inflight WHERE sink = ? ORDER BY first_seq';
const LIST_INFLIGHT_V4 = 'SELECT first_seq AS firstSeq, last_seq AS lastSeq, NULL AS key FROM inflight WHERE sink = ? ORDER BY first_seq';

function toSinkCursor(r: SinkRow, inflight: InflightBatch[]): SinkCursor {
  return {
    name: r.name,
    cursor: r.cursor,
    state: r.state ?? undefined,
    inflight: inflight[0],
    inflightRanges: inflight,
    delivered: r.delivered,
    dropped: r.dropped,
  };
}

function num(v: bigint | string | null | undefined): number | undefined {
  return v === null || v === undefined ? undefined : Number(v);
}

/** The parameters of `endQuiet` for a cached checkpoint that is ahead of the file. */
function quietRow(cp: Checkpoint, nowMs: number) {
  return { modelId: cp.modelId, toMs: cp.watermarkMs ?? null, planState: cp.planState ?? null, fetchId: cp.fetchId, now: nowMs };
}

function splitTokens(v: bigint | string | null | undefined): { tokens?: string[] } {
  return typeof v === 'string' && v !== '' ? { tokens: v.split(' ') } : {};
}

function toCheckpoint(r: Record<string, bigint | string | null>): Checkpoint {
  const from = num(r.win_from);
  const to = num(r.win_to);
  return {
    modelId: String(r.model_id),
    startMs: Number(r.start_ms),
    watermarkMs: num(r.watermark_ms),
    window: from !== undefined && to !== undefined ? { fromMs: from, toMs: to, nextToken: (r.next_token as string | null) ?? undefined, ...splitTokens(r.win_tokens) } : undefined,
    fetchId: Number(r.fetch_id),
    planState: (r.plan_state as string | null) ?? undefined,
    lastEntryNs: r.last_entry_ns === null || r.last_entry_ns === undefined ? undefined : BigInt(r.last_entry_ns),
    startAt: (r.start_at as string | null) ?? undefined,
    updatedMs: Number(r.updated_ms),
  };
}

function migrate(db: DB): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  if (current > latest) {
    throw new StateError('MLS_ERR_STATE_VERSION', `state file schema version ${current} is newer than this mls understands (${latest}); upgrade mls`);
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}
