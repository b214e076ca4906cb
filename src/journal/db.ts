//! The state file's SQLite database: opening it (mode 0600 in a 0700 folder, WAL,
//! synchronous=FULL, numbered migrations), the two kinds of write transaction, and the
//! background sync of the WAL that decides which seqs sinks may read (durableSeq).
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fdatasync, fdatasyncSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StateError, describeError, describeFileError } from '../errors.js';
import { MIGRATIONS } from './migrations.js';

export type DB = Database.Database;
/** A transaction prepared once (better-sqlite3): it takes `A` and returns `R`. */
export type Tx<A extends unknown[], R> = Database.Transaction<(...args: A) => R>;

/** The two ways the store syncs its WAL file to disk. */
export interface WalSync {
  /** On libuv's thread pool, after commits made with `sync: false`. */
  background(fd: number, done: (err: NodeJS.ErrnoException | null) => void): void;
  /** At open, for what a crashed process left unsynced. */
  now(fd: number): void;
}

const FS_WAL_SYNC: WalSync = { background: fdatasync, now: fdatasyncSync };

/**
 * Page size of new state files. A page's journal row and the dedupe blobs span many of
 * SQLite's default 4 KB pages; with pages four times larger they take a quarter of the
 * pages, WAL frames and system calls, which makes the commit path cheaper
 * (docs/decisions/0010-state-page-size-16-kib.md).
 */
const PAGE_SIZE = 16_384;

/**
 * Opens (creating with mode 0600 in a 0700 folder if needed) and migrates the state file
 * for writing, then hands it to `build`. A file that is not a usable SQLite database (an
 * empty one included), found at open or by what `build` reads, or one of a newer schema,
 * raises a StateError that names it and says how to recover.
 */
export function openWritable<T>(path: string, build: (db: DB) => T): T {
  return openWith(
    path,
    () => {
      if (!existsSync(path)) createStateFile(path);
      return new Database(path);
    },
    (db) => {
      db.pragma('busy_timeout = 5000');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      migrate(path, db);
      return build(db);
    },
  );
}

/**
 * Makes a new state file: made beside `path` and renamed into place once SQLite has written
 * its header, so that a crash meanwhile leaves no empty file at `path` (which the next start
 * would refuse as damaged).
 */
function createStateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const aside = `${path}.new`;
  for (const leftover of [aside, `${aside}-wal`, `${aside}-shm`]) rmSync(leftover, { force: true });
  closeSync(openSync(aside, 'wx', 0o600));
  const db = new Database(aside);
  try {
    // Only a new, empty file takes it; an existing file keeps its page size.
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
  renameSync(aside, path);
}

/** Opens an existing state file read-only, as it is (not created, not migrated), and hands it to `build`. Refused as {@link openWritable} refuses it. */
export function openReadOnly<T>(path: string, build: (db: DB) => T): T {
  return openWith(
    path,
    () => new Database(path, { readonly: true, fileMustExist: true }),
    (db) => {
      db.pragma('busy_timeout = 5000');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      refuseNewer(path, db);
      return build(db);
    },
  );
}

function openWith<T>(path: string, open: () => DB, build: (db: DB) => T): T {
  let db: DB | undefined;
  try {
    // SQLite takes an empty file for a new database: a state file emptied by accident would start over from start_at.
    if (statSync(path, { throwIfNoEntry: false })?.size === 0) throw corrupt(path, 'it is empty: 0 bytes');
    db = open();
    return build(db);
  } catch (err) {
    db?.close();
    if (err instanceof StateError) throw err;
    const code = (err as { code?: string }).code ?? '';
    if (/SQLITE_(CORRUPT|NOTADB)/.test(code)) throw corrupt(path, describeError(err), err);
    throw new StateError('MLS_ERR_STATE_OPEN', describeFileError('cannot open the state file', path, err, 'state.path'), { cause: err });
  }
}

function corrupt(path: string, why: string, cause?: unknown): StateError {
  return new StateError(
    'MLS_ERR_STATE_CORRUPT',
    `state file ${path} is corrupt (${why}); run 'mls state check --config <file>' for details, ` +
      `then restore it from a backup or move it aside to start over (the daemon will re-read logs from start_at)`,
    { cause },
  );
}

/** The file's schema version; a StateError when it is newer than this mls knows. */
function refuseNewer(path: string, db: DB): number {
  const current = schemaVersion(db);
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  if (current > latest) {
    throw new StateError('MLS_ERR_STATE_VERSION', `state file ${path} has schema version ${current}, newer than this mls understands (${latest}); upgrade mls`);
  }
  return current;
}

function migrate(path: string, db: DB): void {
  const current = refuseNewer(path, db);
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}

/** The schema version of the file (`PRAGMA user_version`). */
export function schemaVersion(db: DB): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * The random id of a state file, made when the file is created (or first opened for
 * writing by a version that has it): part of every batch id, so two installations, or a
 * state file started afresh, never send different batches under one Idempotency-Key.
 */
export function ensureInstallationId(db: DB): string {
  db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('installation_id', ?)").run(randomUUID());
  return readInstallationId(db)!;
}

/** The installation id; undefined in a file that no version with one has written yet. */
export function readInstallationId(db: DB): string | undefined {
  return db.prepare("SELECT value FROM meta WHERE key = 'installation_id'").pluck().get() as string | undefined;
}

/** Runs SQLite's integrity check; returns the problems found (empty when healthy). */
export function integrityCheck(db: DB): string[] {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
}

/**
 * The state file open for writing: its transactions, and how far the journal is on disk.
 * Seqs are given out by the journal (entries.ts); sinks read only up to {@link durableSeq}.
 */
export class StateDb {
  /** Highest seq given out (0 when none). */
  private last = 0;
  /** Highest seq known to be on disk: sinks read no further (see {@link StateDb.syncWal}). */
  private durable = 0;
  /** The WAL, opened read-only for `fdatasync` (see {@link StateDb.syncWal}). */
  private walFd: number | undefined;
  private syncing = false;
  /** Set once a sync of the WAL failed: from then on nothing more is written. */
  private syncFailure: StateError | undefined;
  private isClosed = false;
  private readonly syncNormal: Database.Statement;
  private readonly syncFull: Database.Statement;

  constructor(
    readonly path: string,
    readonly db: DB,
    private readonly walSync: WalSync = FS_WAL_SYNC,
  ) {
    this.syncNormal = db.prepare('PRAGMA synchronous = NORMAL');
    this.syncFull = db.prepare('PRAGMA synchronous = FULL');
    // A process that crashed may have left commits in the WAL that were never synced (see
    // syncWal): they are in the kernel's cache, not yet on disk. Sync them before any sink
    // reads them.
    const wal = `${path}-wal`;
    if (existsSync(wal)) {
      this.walFd = openSync(wal, 'r');
      this.walSync.now(this.walFd);
    }
  }

  /** Highest seq given out (0 when none). */
  get lastSeq(): number {
    return this.last;
  }

  /** Highest seq whose entries are on disk: what sinks may read. */
  get durableSeq(): number {
    return this.durable;
  }

  /** The journal's end as found at open: on disk, since the WAL was synced at open. */
  start(lastSeq: number): void {
    this.last = lastSeq;
    this.durable = lastSeq;
  }

  /** Records seqs given out by a committed transaction (`durable`: one committed with fsync). */
  advance(lastSeq: number, durable: boolean): void {
    this.last = lastSeq;
    if (durable) this.durable = lastSeq;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Throws unless writes may go ahead: the store is open and no sync of the WAL has failed. */
  assertWritable(): void {
    if (this.isClosed) throw new StateError('MLS_ERR_STATE_CLOSED', `state file ${this.path} is closed`);
    if (this.syncFailure) throw this.syncFailure;
  }

  /**
   * Runs `tx` committed without fsync: in WAL mode a process crash cannot undo it, and the
   * next synced commit makes it durable.
   */
  unsynced<A extends unknown[], R>(tx: Tx<A, R>, ...args: A): R {
    this.assertWritable();
    this.syncNormal.run();
    try {
      return tx.immediate(...args);
    } finally {
      this.syncFull.run();
    }
  }

  /**
   * Runs `tx` committed with fsync. Syncing the WAL makes every commit before it durable
   * too, so sinks may read up to the last seq given out.
   */
  synced<A extends unknown[], R>(tx: Tx<A, R>, ...args: A): R {
    this.assertWritable();
    const result = tx.immediate(...args);
    this.durable = this.last;
    return result;
  }

  /**
   * Makes every commit so far durable: an `fdatasync` of the WAL on libuv's thread pool.
   * Commits made with `sync: false` are in the WAL (a crash of the process cannot undo them)
   * but may not be on disk; sinks read only up to the seq this last made durable. The WAL
   * only ever loses a suffix of commits, so a page and its checkpoint stand or fall together.
   * The caller must not commit while the sync runs: writes to a file being synced wait for it.
   * A failed sync is final (the kernel may have dropped the pages): every later write throws.
   */
  syncWal(): Promise<void> {
    this.assertWritable();
    const seq = this.last;
    if (this.syncing) throw new Error('syncJournal: a sync is already running');
    this.walFd ??= openSync(`${this.path}-wal`, 'r');
    const fd = this.walFd;
    this.syncing = true;
    return new Promise((resolve, reject) => {
      this.walSync.background(fd, (err) => {
        this.syncing = false;
        if (this.isClosed) this.closeWal();
        if (err) {
          this.syncFailure = new StateError('MLS_ERR_STATE_SYNC', `could not sync the state file ${this.path} to disk (${describeError(err)}); restart mls to recover from the file`, { cause: err });
          reject(this.syncFailure);
          return;
        }
        this.durable = Math.max(this.durable, seq);
        resolve();
      });
    });
  }

  /** Closes the database (the WAL's descriptor once a sync in progress ends). Idempotent. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.db.close();
    this.closeWal();
  }

  private closeWal(): void {
    if (this.walFd === undefined || this.syncing) return;
    closeSync(this.walFd);
    this.walFd = undefined;
  }
}
