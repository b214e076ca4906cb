//! The state file: one SQLite database (WAL, synchronous=FULL) holding per-model
//! checkpoints, dedupe counts, the journal of new entries, per-sink cursors and the
//! dead-letter table. Every page of logs is committed in one transaction together
//! with the checkpoint, so the checkpoint never moves ahead of durable entries.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StateError, describeError } from '../errors.js';
import type { LogEntry } from '../api/types.js';
import type { SinkEntry } from '../sinks/contract.js';
import { countOccurrence } from '../dedupe/occurrences.js';
import { MIGRATIONS } from './migrations.js';

type DB = Database.Database;
type Stmt = Database.Statement;

/** Where polling of one model stands. */
export interface Checkpoint {
  modelId: string;
  startMs: number;
  watermarkMs: number | undefined;
  window: { fromMs: number; toMs: number; nextToken: string | undefined } | undefined;
  fetchId: number;
  planState: string | undefined;
  lastEntryNs: bigint | undefined;
  updatedMs: number;
}

/** An entry ready to be committed: parsed time and content hash computed by the caller. */
export interface PreparedEntry {
  entry: LogEntry;
  timeNs: bigint;
  hash: bigint;
}

/** How a page ends its window fetch. */
export type PageContinuation = { nextToken: string } | { end: true };

/** Result of committing one page. */
export interface PageCommit {
  appended: number;
  duplicates: number;
  firstSeq: number | undefined;
  lastSeq: number | undefined;
}

/** A sink's row. */
export interface SinkCursor {
  name: string;
  cursor: number;
  state: string | undefined;
  /** The oldest batch sent but not acknowledged, if any. */
  inflight: { firstSeq: number; lastSeq: number } | undefined;
  /** Every batch sent but not acknowledged, oldest first. */
  inflightRanges: Array<{ firstSeq: number; lastSeq: number }>;
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
}

const ENTRY_OVERHEAD_BYTES = 48;

/** Approximate stored size of an entry, used for the journal's byte bound. */
export function entryBytes(modelId: string, e: LogEntry): number {
  return modelId.length + e.time.length + e.stream.length + Buffer.byteLength(e.log) + ENTRY_OVERHEAD_BYTES;
}

/** The daemon's state file. Synchronous (better-sqlite3); one instance per process. */
export class StateStore {
  readonly path: string;
  private readonly db: DB;
  private readonly now: () => number;
  private readonly stmts: ReturnType<StateStore['prepare']> | undefined;
  private journalCount = 0;
  private journalBytes = 0;
  private closed = false;

  private constructor(path: string, db: DB, options: StoreOptions) {
    this.path = path;
    this.db = db;
    this.now = options.now ?? Date.now;
    if (!options.readonly) this.stmts = this.prepare();
    const row = this.db.prepare('SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM journal').get() as { n: number; b: number };
    this.journalCount = row.n;
    this.journalBytes = row.b;
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
      throw new StateError('MLS_ERR_STATE_OPEN', `cannot open state file ${path}: ${describeError(err)}`, { cause: err });
    }
  }

  private prepare() {
    const db = this.db;
    return {
      getCheckpoint: db.prepare('SELECT * FROM checkpoints WHERE model_id = ?').safeIntegers(true),
      insertCheckpoint: db.prepare('INSERT OR IGNORE INTO checkpoints (model_id, start_ms, updated_ms) VALUES (?, ?, ?)'),
      beginWindow: db.prepare(
        'UPDATE checkpoints SET win_from = ?, win_to = ?, plan_pending = ?, next_token = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ?',
      ),
      restartWindow: db.prepare('UPDATE checkpoints SET next_token = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ?'),
      setToken: db.prepare('UPDATE checkpoints SET next_token = ?, updated_ms = ? WHERE model_id = ?'),
      endWindow: db.prepare(
        `UPDATE checkpoints SET watermark_ms = max(coalesce(watermark_ms, win_to), win_to), plan_state = coalesce(plan_pending, plan_state),
           plan_pending = NULL, win_from = NULL, win_to = NULL, next_token = NULL, updated_ms = ? WHERE model_id = ?`,
      ),
      setLastEntry: db.prepare('UPDATE checkpoints SET last_entry_ns = max(coalesce(last_entry_ns, ?), ?) WHERE model_id = ?'),
      setPlanState: db.prepare('UPDATE checkpoints SET plan_state = ?, updated_ms = ? WHERE model_id = ?'),
      getKey: db.prepare('SELECT delivered, seen, fetch_id AS fetchId FROM dedupe WHERE model_id = ? AND time_ns = ? AND hash = ?'),
      putKey: db.prepare(
        `INSERT INTO dedupe (model_id, time_ns, hash, delivered, seen, fetch_id, touched_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (model_id, time_ns, hash) DO UPDATE SET delivered = excluded.delivered, seen = excluded.seen,
           fetch_id = excluded.fetch_id, touched_ms = max(touched_ms, excluded.touched_ms)`,
      ),
      pruneKeys: db.prepare('DELETE FROM dedupe WHERE model_id = ? AND time_ns < ? AND touched_ms < ?'),
      append: db.prepare('INSERT INTO journal (model_id, time, time_ns, stream, log, fetched_ms, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      readAfter: db.prepare('SELECT * FROM journal WHERE seq > ? ORDER BY seq LIMIT ?').safeIntegers(true),
      readRange: db.prepare('SELECT * FROM journal WHERE seq BETWEEN ? AND ? ORDER BY seq').safeIntegers(true),
      getSink: db.prepare('SELECT * FROM sinks WHERE name = ?'),
      insertSink: db.prepare('INSERT OR IGNORE INTO sinks (name, cursor, updated_ms) VALUES (?, ?, ?)'),
      addInflight: db.prepare('INSERT OR REPLACE INTO inflight (sink, first_seq, last_seq) VALUES (?, ?, ?)'),
      listInflight: db.prepare('SELECT first_seq AS firstSeq, last_seq AS lastSeq FROM inflight WHERE sink = ? ORDER BY first_seq'),
      clearInflight: db.prepare('DELETE FROM inflight WHERE sink = ? AND last_seq <= ?'),
      ack: db.prepare('UPDATE sinks SET cursor = max(cursor, ?), state = coalesce(?, state), delivered = delivered + ?, updated_ms = ? WHERE name = ?'),
      setSinkState: db.prepare('UPDATE sinks SET state = ?, updated_ms = ? WHERE name = ?'),
      minCursor: db.prepare('SELECT min(cursor) AS c FROM sinks'),
      lastSeq: db.prepare("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'journal'), 0) AS s"),
      sumBelow: db.prepare('SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b, max(seq) AS m FROM journal WHERE seq <= ?'),
      deleteBelow: db.prepare('DELETE FROM journal WHERE seq <= ?'),
      oldestSeqs: db.prepare('SELECT seq, bytes FROM journal ORDER BY seq LIMIT ?'),
      insertDlq: db.prepare(
        'INSERT INTO dlq (sink, first_seq, last_seq, count, error, created_ms, entries) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
    };
  }

  private get s() {
    if (!this.stmts) throw new StateError('MLS_ERR_STATE_READONLY', `state file ${this.path} is open read-only`);
    if (this.closed) throw new StateError('MLS_ERR_STATE_CLOSED', `state file ${this.path} is closed`);
    return this.stmts;
  }

  // ---- checkpoints -------------------------------------------------------------------

  /** The checkpoint of a model, if it was ever seen. */
  getCheckpoint(modelId: string): Checkpoint | undefined {
    const stmt = this.stmts?.getCheckpoint ?? this.db.prepare('SELECT * FROM checkpoints WHERE model_id = ?').safeIntegers(true);
    const row = stmt.get(modelId) as Record<string, bigint | string | null> | undefined;
    return row ? toCheckpoint(row) : undefined;
  }

  /** All checkpoints (for status). */
  listCheckpoints(): Checkpoint[] {
    const rows = this.db.prepare('SELECT * FROM checkpoints ORDER BY model_id').safeIntegers(true).all() as Record<string, bigint | string | null>[];
    return rows.map(toCheckpoint);
  }

  /** Returns the model's checkpoint, creating it with `startMs` when the model is new. */
  ensureCheckpoint(modelId: string, startMs: number): Checkpoint {
    this.s.insertCheckpoint.run(modelId, Math.floor(startMs), this.now());
    return this.getCheckpoint(modelId)!;
  }

  /**
   * Starts a new fetch of window [fromMs, toMs]: a fresh fetch id and no token.
   * `planStateAfter` is the planner state to adopt once the window has been fetched to
   * the end; it is applied in the transaction of the last page.
   */
  beginWindow(modelId: string, fromMs: number, toMs: number, planStateAfter?: string): Checkpoint {
    this.s.beginWindow.run(Math.floor(fromMs), Math.ceil(toMs), planStateAfter ?? null, this.now(), modelId);
    return this.getCheckpoint(modelId)!;
  }

  /** Restarts the window in progress from its first page (new fetch id, no token). */
  restartWindow(modelId: string): Checkpoint {
    this.s.restartWindow.run(this.now(), modelId);
    return this.getCheckpoint(modelId)!;
  }

  /** Stores the planner's own state for a model. */
  setPlanState(modelId: string, planState: string): void {
    this.s.setPlanState.run(planState, this.now(), modelId);
  }

  /**
   * Commits one page of window fetch `fetchId`, in one transaction: the new entries
   * (by occurrence counts), the dedupe counts, and the token of the next page or the end
   * of the window (moving the watermark to the window's end).
   */
  commitPage(modelId: string, fetchId: number, windowFromMs: number, entries: readonly PreparedEntry[], next: PageContinuation, fetchedMs: number): PageCommit {
    const s = this.s;
    const result: PageCommit = { appended: 0, duplicates: 0, firstSeq: undefined, lastSeq: undefined };
    let addedBytes = 0;
    let maxNs: bigint | undefined;
    this.db.transaction(() => {
      for (const p of entries) {
        const stored = s.getKey.get(modelId, p.timeNs, p.hash) as { delivered: number; seen: number; fetchId: number } | undefined;
        const { counts, isNew } = countOccurrence(stored, fetchId);
        s.putKey.run(modelId, p.timeNs, p.hash, counts.delivered, counts.seen, counts.fetchId, windowFromMs);
        if (isNew) {
          const bytes = entryBytes(modelId, p.entry);
          const info = s.append.run(modelId, p.entry.time, p.timeNs, p.entry.stream, p.entry.log, fetchedMs, bytes);
          const seq = Number(info.lastInsertRowid);
          result.firstSeq ??= seq;
          result.lastSeq = seq;
          result.appended++;
          addedBytes += bytes;
        } else {
          result.duplicates++;
        }
        if (maxNs === undefined || p.timeNs > maxNs) maxNs = p.timeNs;
      }
      if (maxNs !== undefined) s.setLastEntry.run(maxNs, maxNs, modelId);
      if ('end' in next) s.endWindow.run(this.now(), modelId);
      else s.setToken.run(next.nextToken, this.now(), modelId);
    }).immediate();
    this.journalCount += result.appended;
    this.journalBytes += addedBytes;
    return result;
  }

  /** Forgets dedupe keys that no future window can reach. Returns the number removed. */
  pruneKeys(modelId: string, horizonMs: number): number {
    const horizonNs = BigInt(Math.floor(horizonMs)) * 1_000_000n;
    return this.s.pruneKeys.run(modelId, horizonNs, Math.floor(horizonMs)).changes;
  }

  // ---- journal -----------------------------------------------------------------------

  /** Rows and approximate bytes currently in the journal. */
  journalSize(): { entries: number; bytes: number } {
    return { entries: this.journalCount, bytes: this.journalBytes };
  }

  /** Highest seq ever assigned (0 when none). */
  lastSeq(): number {
    const stmt = this.stmts?.lastSeq ?? this.db.prepare("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'journal'), 0) AS s");
    return Number((stmt.get() as { s: number | bigint }).s);
  }

  /** Up to `limit` entries after `afterSeq`, stopping early once `maxBytes` is reached. */
  readAfter(afterSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): SinkEntry[] {
    const rows = this.s.readAfter.all(afterSeq, limit) as JournalRow[];
    const out: SinkEntry[] = [];
    let bytes = 0;
    for (const r of rows) {
      const b = Number(r.bytes);
      if (out.length > 0 && bytes + b > maxBytes) break;
      bytes += b;
      out.push(toSinkEntry(r));
    }
    return out;
  }

  /** The entries with seq in [firstSeq, lastSeq] that are still in the journal. */
  readRange(firstSeq: number, lastSeq: number): SinkEntry[] {
    return (this.s.readRange.all(firstSeq, lastSeq) as JournalRow[]).map(toSinkEntry);
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
    this.db.transaction(() => {
      const sum = s.sumBelow.get(seq) as { n: number; b: number };
      if (sum.n > 0) s.deleteBelow.run(seq);
      res = sum;
    }).immediate();
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
    const rows = s.oldestSeqs.all(Math.max(entries, 1) + (bytes > 0 ? 100_000 : 0)) as { seq: number; bytes: number }[];
    let through: number | undefined;
    let freedEntries = 0;
    let freedBytes = 0;
    for (const r of rows) {
      if (freedEntries >= entries && freedBytes >= bytes) break;
      through = r.seq;
      freedEntries++;
      freedBytes += r.bytes;
    }
    if (through === undefined) return dropped;
    const last = through;
    this.db.transaction(() => {
      for (const sink of this.listSinks()) {
        if (sink.cursor < last) {
          const lost = (this.db.prepare('SELECT count(*) AS n FROM journal WHERE seq > ? AND seq <= ?').get(sink.cursor, last) as { n: number }).n;
          this.db.prepare('UPDATE sinks SET cursor = ?, dropped = dropped + ?, updated_ms = ? WHERE name = ?').run(last, lost, this.now(), sink.name);
          this.db.prepare('DELETE FROM inflight WHERE sink = ? AND first_seq <= ?').run(sink.name, last);
          if (lost > 0) dropped.set(sink.name, lost);
        }
      }
    }).immediate();
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

  private inflightOf(name: string): Array<{ firstSeq: number; lastSeq: number }> {
    const stmt = this.stmts?.listInflight ?? this.db.prepare('SELECT first_seq AS firstSeq, last_seq AS lastSeq FROM inflight WHERE sink = ? ORDER BY first_seq');
    return stmt.all(name) as Array<{ firstSeq: number; lastSeq: number }>;
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

  /** Records the seq range of a batch about to be sent, so a restart rebuilds the same batch. */
  setInflight(name: string, firstSeq: number, lastSeq: number): void {
    this.s.addInflight.run(name, firstSeq, lastSeq);
  }

  /**
   * Moves a sink's cursor after an acknowledged batch, with the sink's state, and forgets
   * the in-flight ranges it covers, in one transaction.
   */
  ack(name: string, lastSeq: number, delivered: number, state?: string): void {
    this.db.transaction(() => {
      this.s.ack.run(lastSeq, state ?? null, delivered, this.now(), name);
      this.s.clearInflight.run(name, lastSeq);
    }).immediate();
  }

  /** Stores a sink's state without moving its cursor. */
  setSinkState(name: string, state: string): void {
    this.s.setSinkState.run(state, this.now(), name);
  }

  // ---- dead letters ------------------------------------------------------------------

  /** Stores a rejected batch and moves the sink's cursor past it, in one transaction. */
  deadLetter(name: string, firstSeq: number, lastSeq: number, entries: readonly SinkEntry[], error: string): number {
    let id = 0;
    this.db.transaction(() => {
      const json = JSON.stringify(entries.map((e) => ({ ...e, timeNs: e.timeNs.toString() })));
      id = Number(this.s.insertDlq.run(name, firstSeq, lastSeq, entries.length, error.slice(0, 2000), this.now(), json).lastInsertRowid);
      this.s.ack.run(lastSeq, null, 0, this.now(), name);
      this.s.clearInflight.run(name, lastSeq);
    }).immediate();
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
    this.closed = true;
    this.db.close();
  }
}

interface JournalRow {
  seq: bigint;
  model_id: string;
  time: string;
  time_ns: bigint;
  stream: string;
  log: string;
  fetched_ms: bigint;
  bytes: bigint;
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

function toSinkEntry(r: JournalRow): SinkEntry {
  return { seq: Number(r.seq), modelId: r.model_id, time: r.time, timeNs: r.time_ns, stream: r.stream, log: r.log, fetchedAtMs: Number(r.fetched_ms) };
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

function toSinkCursor(r: SinkRow, inflight: Array<{ firstSeq: number; lastSeq: number }>): SinkCursor {
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

function toCheckpoint(r: Record<string, bigint | string | null>): Checkpoint {
  const from = num(r.win_from);
  const to = num(r.win_to);
  return {
    modelId: String(r.model_id),
    startMs: Number(r.start_ms),
    watermarkMs: num(r.watermark_ms),
    window: from !== undefined && to !== undefined ? { fromMs: from, toMs: to, nextToken: (r.next_token as string | null) ?? undefined } : undefined,
    fetchId: Number(r.fetch_id),
    planState: (r.plan_state as string | null) ?? undefined,
    lastEntryNs: r.last_entry_ns === null || r.last_entry_ns === undefined ? undefined : BigInt(r.last_entry_ns),
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
