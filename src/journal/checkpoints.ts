//! Per-model checkpoints: where polling of each model stands (watermark, the window in
//! progress with its next token and the hashes of the tokens followed, planner state, the
//! `start_at` setting the start answers to). Windows that returned nothing are kept in
//! memory and written together (see {@link Checkpoints.deferQuiet}).
import type Database from 'better-sqlite3';
import { StateError } from '../errors.js';
import { CheckpointReads, type Checkpoint } from './checkpoint-reads.js';
import type { StateDb, Tx } from './db.js';

/** A window not yet recorded: the first page's transaction records it (saving a commit per window). */
export interface WindowStart {
  fromMs: number;
  toMs: number;
  planStateAfter?: string | undefined;
}

/**
 * How a page ends its window fetch. `tokenHash` (hex) is added to the window's set of
 * tokens followed, in the same transaction that stores the token.
 */
export type PageContinuation = { nextToken: string; tokenHash?: string } | { end: true };

/**
 * How long the checkpoint updates of quiet windows wait to be written, for `models` models:
 * 6 ms per model, between 1 s and 60 s. Each write touches most of the checkpoint table's
 * pages once thousands of models are due every second, and a model polled several times in
 * between is written once: with 10,000 models polled every 10 s, a write every 60 s writes
 * each checkpoint once instead of six times. A crash then has at most that many seconds of
 * empty windows read again, which the next poll of each quiet model does in one request.
 */
export function quietFlushDelayMs(models: number): number {
  return Math.min(60_000, Math.max(1_000, 6 * models));
}

/**
 * The parameters of `endQuiet` for a cached checkpoint that is ahead of the file: the file
 * then holds it as cached, its time of change included (not the time it was written).
 */
function quietRow(cp: Checkpoint) {
  return { modelId: cp.modelId, toMs: cp.watermarkMs ?? null, planState: cp.planState ?? null, fetchId: cp.fetchId, now: cp.updatedMs };
}

/** A checkpoint to create: the model's start, and the `start_at` setting (as written) it answers to. */
export interface NewCheckpoint {
  modelId: string;
  startMs: number;
  startAt: string | undefined;
}

/** A model's `start_at` setting (as written) that its stored start now answers to. */
export interface StartAtRecord {
  modelId: string;
  startAt: string;
}

/** The checkpoints of the store: cached as last written (this process is the only writer: see lock.ts). */
export class Checkpoints extends CheckpointReads {
  private readonly cache = new Map<string, Checkpoint>();
  /** Models whose cached checkpoint is ahead of the file by windows that returned nothing. */
  private readonly quiet = new Set<string>();
  private quietTimer: NodeJS.Timeout | undefined;
  private readonly insert: Database.Statement;
  private readonly setStartAt: Database.Statement;
  private readonly begin: Database.Statement;
  private readonly restart: Database.Statement;
  private readonly shorten: Database.Statement;
  private readonly record: Database.Statement;
  private readonly setToken: Database.Statement;
  private readonly endWindow: Database.Statement;
  private readonly setLastEntry: Database.Statement;
  private readonly endQuiet: Database.Statement;
  private readonly writeQuiet: Tx<[], void>;
  private readonly insertMany: Tx<[models: readonly NewCheckpoint[], nowMs: number], void>;
  private readonly setStartAts: Tx<[changes: readonly StartAtRecord[]], void>;

  constructor(
    private readonly state: StateDb,
    private readonly now: () => number,
    /** Fixed delay of the quiet windows' writes; undefined: {@link Checkpoints.quietDelayMs}. */
    private readonly quietFlushMs: number | undefined,
  ) {
    super(state.db);
    const db = state.db;
    this.insert = db.prepare('INSERT OR IGNORE INTO checkpoints (model_id, start_ms, start_at, updated_ms) VALUES (?, ?, ?, ?)');
    this.setStartAt = db.prepare('UPDATE checkpoints SET start_at = ? WHERE model_id = ?');
    this.begin = db.prepare(
      'UPDATE checkpoints SET win_from = ?, win_to = ?, plan_pending = ?, next_token = NULL, win_tokens = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ?',
    );
    this.restart = db.prepare('UPDATE checkpoints SET next_token = NULL, win_tokens = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ?');
    this.shorten = db.prepare(
      'UPDATE checkpoints SET win_to = ?, plan_pending = ?, next_token = NULL, win_tokens = NULL, fetch_id = fetch_id + 1, updated_ms = ? WHERE model_id = ? AND win_from IS NOT NULL',
    );
    this.record = db.prepare('UPDATE checkpoints SET win_from = ?, win_to = ?, plan_pending = ?, next_token = NULL, win_tokens = NULL, fetch_id = ?, updated_ms = ? WHERE model_id = ?');
    this.setToken = db.prepare(
      `UPDATE checkpoints SET next_token = @token, win_tokens = CASE WHEN @hash IS NULL THEN win_tokens ELSE coalesce(win_tokens || ' ', '') || @hash END,
         updated_ms = @now WHERE model_id = @modelId`,
    );
    this.endWindow = db.prepare(
      `UPDATE checkpoints SET watermark_ms = max(coalesce(watermark_ms, win_to), win_to), plan_state = coalesce(plan_pending, plan_state),
         plan_pending = NULL, win_from = NULL, win_to = NULL, next_token = NULL, win_tokens = NULL, updated_ms = ? WHERE model_id = ?`,
    );
    this.setLastEntry = db.prepare('UPDATE checkpoints SET last_entry_ns = max(coalesce(last_entry_ns, ?), ?) WHERE model_id = ?');
    this.endQuiet = db.prepare(
      `UPDATE checkpoints SET watermark_ms = max(coalesce(watermark_ms, @toMs), coalesce(@toMs, watermark_ms)), plan_state = coalesce(@planState, plan_state),
         fetch_id = max(fetch_id, @fetchId), updated_ms = @now WHERE model_id = @modelId AND win_from IS NULL`,
    );
    this.insertMany = db.transaction((models: readonly NewCheckpoint[], nowMs: number) => {
      for (const m of models) this.insert.run(m.modelId, Math.floor(m.startMs), m.startAt ?? null, nowMs);
    });
    this.setStartAts = db.transaction((changes: readonly StartAtRecord[]) => {
      for (const c of changes) this.setStartAt.run(c.startAt, c.modelId);
    });
    this.writeQuiet = db.transaction(() => {
      for (const modelId of this.quiet) this.endQuiet.run(quietRow(this.cache.get(modelId)!));
    });
  }

  override get(modelId: string): Checkpoint | undefined {
    const cached = this.cache.get(modelId);
    if (cached) return cached;
    const cp = super.get(modelId);
    if (cp) this.cache.set(modelId, cp);
    return cp;
  }

  /** All checkpoints, with the windows that returned nothing written first. */
  override list(): Checkpoint[] {
    this.flushQuiet();
    return super.list();
  }

  /** Returns the model's checkpoint, creating it with `startMs` when the model is new. */
  ensure(modelId: string, startMs: number, startAt: string | undefined): Checkpoint {
    this.ensureMany([{ modelId, startMs, startAt }]);
    return this.get(modelId)!;
  }

  /**
   * Creates the checkpoints of the models new to the file, in one transaction (a first
   * start with thousands of models would otherwise commit, and sync, once per model).
   * Models that already have one keep it.
   */
  ensureMany(models: readonly NewCheckpoint[]): void {
    this.state.assertWritable();
    if (models.length === 0) return;
    this.insertMany.immediate(models, this.now());
  }

  /**
   * Records, for each model, the `start_at` setting (as written) that its stored start now
   * answers to: in one transaction, since a changed setting (or a file from before settings
   * were recorded) concerns every model, and a synced commit each would add up to seconds
   * with thousands of models.
   */
  recordStartAts(changes: readonly StartAtRecord[]): void {
    this.state.assertWritable();
    if (changes.length === 0) return;
    for (const c of changes) this.uncache(c.modelId);
    this.setStartAts.immediate(changes);
  }

  /**
   * Starts a new fetch of window [fromMs, toMs]: a fresh fetch id and no token.
   * `planStateAfter` is the planner state to adopt once the window has been fetched to
   * the end; it is applied in the transaction of the last page.
   */
  beginWindow(modelId: string, fromMs: number, toMs: number, planStateAfter: string | undefined): Checkpoint {
    return this.change(modelId, this.begin, Math.floor(fromMs), Math.ceil(toMs), planStateAfter ?? null);
  }

  /** Restarts the window in progress from its first page (new fetch id, no token). */
  restartWindow(modelId: string): Checkpoint {
    return this.change(modelId, this.restart);
  }

  /**
   * Cuts the window in progress short at `toMs` and starts fetching it again from its first
   * page: a new fetch id, no token, no tokens followed. `planStateAfter` replaces the planner
   * state to adopt when the window completes (it must cover only the shorter window).
   */
  shortenWindow(modelId: string, toMs: number, planStateAfter: string | undefined): Checkpoint {
    return this.change(modelId, this.shorten, Math.ceil(toMs), planStateAfter ?? null);
  }

  /** Runs `statement` with `params`, then the time and the model id; returns the checkpoint as written. */
  private change(modelId: string, statement: Database.Statement, ...params: unknown[]): Checkpoint {
    this.state.assertWritable();
    this.uncache(modelId);
    statement.run(...params, this.now(), modelId);
    return this.get(modelId)!;
  }

  /** Drops a model's cached checkpoint before a write changes it, writing it first if it is ahead of the file. */
  private uncache(modelId: string): void {
    if (this.quiet.has(modelId)) this.flushQuiet();
    this.cache.delete(modelId);
  }

  // ---- inside a page's transaction (page-commit.ts) -----------------------------------

  /** The cached checkpoint of a model whose windows that returned nothing are not yet written. */
  unwritten(modelId: string): Checkpoint | undefined {
    return this.quiet.has(modelId) ? this.cache.get(modelId) : undefined;
  }

  /**
   * Writes a page's checkpoint (after its entries, in its transaction): what `unwritten`
   * returned, the window the page begins, its newest entry time, then the next token or the
   * window's end.
   */
  writePage(modelId: string, fetchId: number, unwritten: Checkpoint | undefined, begin: WindowStart | undefined, next: PageContinuation, latestNs: bigint | undefined): void {
    const nowMs = this.now();
    if (unwritten) this.endQuiet.run(quietRow(unwritten));
    if (begin) this.record.run(Math.floor(begin.fromMs), Math.ceil(begin.toMs), begin.planStateAfter ?? null, fetchId, nowMs, modelId);
    if (latestNs !== undefined) this.setLastEntry.run(latestNs, latestNs, modelId);
    if ('end' in next) this.endWindow.run(nowMs, modelId);
    else this.setToken.run({ token: next.nextToken, hash: next.tokenHash ?? null, now: nowMs, modelId });
  }

  /** The end of the window a page belongs to: the window it begins, or the one in progress. */
  windowEndMs(modelId: string, begin: WindowStart | undefined): number | undefined {
    const to = begin?.toMs ?? this.get(modelId)?.window?.toMs;
    return to === undefined ? undefined : Math.ceil(to);
  }

  /** After the page's transaction committed: the file holds the model's checkpoint, read again when next asked for. */
  committed(modelId: string): void {
    this.quiet.delete(modelId);
    this.cache.delete(modelId);
  }

  // ---- windows that returned nothing --------------------------------------------------

  /**
   * A window that is one empty page (an idle model's usual poll) changes only the
   * checkpoint. Such updates are kept in memory and written together, one transaction for
   * all models, within `quietFlushMs` (by default 1–60 s, see {@link quietFlushDelayMs}),
   * or earlier with the model's next write. A crash in
   * between makes the daemon read those windows again, which returns nothing new.
   */
  deferQuiet(modelId: string, begin: WindowStart, fetchId: number): void {
    const cp = this.get(modelId);
    if (!cp) throw new StateError('MLS_ERR_STATE_NO_CHECKPOINT', `no checkpoint for model ${modelId}`);
    // The cached checkpoint (get() caches what it reads) is changed in place: a new object per
    // quiet poll lived until the model's next poll, long enough to be promoted to the old
    // generation. Callers use a checkpoint between two awaits and keep copies (model-poller.ts).
    const toMs = Math.ceil(begin.toMs);
    cp.watermarkMs = Math.max(cp.watermarkMs ?? toMs, toMs);
    cp.window = undefined;
    cp.fetchId = Math.max(cp.fetchId, fetchId);
    cp.planState = begin.planStateAfter ?? cp.planState;
    cp.updatedMs = this.now();
    this.quiet.add(modelId);
    this.quietTimer ??= setTimeout(() => this.flushQuietSoon(), this.quietDelayMs()).unref();
  }

  /** How long quiet windows wait now: `quietFlushMs`, else {@link quietFlushDelayMs} of the models cached. */
  private quietDelayMs(): number {
    return this.quietFlushMs ?? quietFlushDelayMs(this.cache.size);
  }

  private flushQuietSoon(): void {
    this.quietTimer = undefined;
    try {
      this.flushQuiet();
    } catch {
      // Kept in memory and tried again; the model's next write or close() also writes it.
      if (!this.state.closed && this.quiet.size > 0) this.quietTimer = setTimeout(() => this.flushQuietSoon(), this.quietDelayMs()).unref();
    }
  }

  /**
   * Writes the checkpoint updates of windows that returned nothing, in one transaction
   * (without fsync: losing them only makes the same empty windows be read again).
   */
  flushQuiet(): void {
    if (this.quiet.size === 0 || this.state.closed) return;
    this.state.unsynced(this.writeQuiet);
    this.quiet.clear();
  }

  /** Stops the timer and writes what it would have written; a failure leaves those windows to be read again. */
  close(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = undefined;
    try {
      this.flushQuiet();
    } catch {
      // Unwritten empty windows are read again at the next start.
    }
  }
}
