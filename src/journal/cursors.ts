//! Per-sink cursors: the highest seq each sink acknowledged, with its committed state and
//! counts, and the seq ranges of batches sent but not acknowledged with the key each was
//! sent under, so a restart rebuilds the same batches and sends them under the same keys.
import type Database from 'better-sqlite3';
import type { DB, StateDb, Tx } from './db.js';

/** A batch sent but not acknowledged: its seq range and the key it was sent under. */
export interface InflightBatch {
  firstSeq: number;
  lastSeq: number;
  /** Its batch id (Idempotency-Key); undefined for a batch recorded by schema 4 or earlier. */
  key: string | undefined;
  /** The multiline groups it closed besides its lines (processing; see delivery/processing), as recorded. */
  closes: string | undefined;
}

/**
 * What a sink with processing holds in open multiline groups, committed with its cursor:
 * `json` describes the groups (undefined: none), `holdSeq` is the lowest seq they hold.
 */
export interface HeldGroups {
  json: string | undefined;
  holdSeq: number | undefined;
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
  /** The open multiline groups committed with the cursor (undefined: none). */
  held: string | undefined;
  /** The lowest seq they hold: the journal keeps it and what follows. */
  holdSeq: number | undefined;
}

interface SinkRow {
  name: string;
  cursor: number;
  state: string | null;
  delivered: number;
  dropped: number;
  held?: string | null;
  hold_seq?: number | null;
}


/** Sink rows as the file holds them (the store's and the read-only reader's). */
export class SinkReads {
  private readonly one: Database.Statement;
  private readonly all: Database.Statement;
  private readonly inflight: Database.Statement;

  /** `schema`: the file's schema version (5 and later keep batch keys, 6 and later closes and held groups). */
  constructor(db: DB, schema: number) {
    this.one = db.prepare('SELECT * FROM sinks WHERE name = ?');
    this.all = db.prepare('SELECT * FROM sinks ORDER BY name');
    // Schema 4 and earlier kept no batch keys, 5 no closes (a file the reader opens is not migrated).
    const key = schema >= 5 ? 'batch_key' : 'NULL';
    const closes = schema >= 6 ? 'closes' : 'NULL';
    this.inflight = db.prepare(`SELECT first_seq AS firstSeq, last_seq AS lastSeq, ${key} AS key, ${closes} AS closes FROM inflight WHERE sink = ? ORDER BY first_seq`);
  }

  /** A sink's cursor row. */
  get(name: string): SinkCursor | undefined {
    const row = this.one.get(name) as SinkRow | undefined;
    return row ? this.toSinkCursor(row) : undefined;
  }

  /** All sink rows, by name. */
  list(): SinkCursor[] {
    return (this.all.all() as SinkRow[]).map((r) => this.toSinkCursor(r));
  }

  private toSinkCursor(r: SinkRow): SinkCursor {
    const rows = this.inflight.all(r.name) as Array<{ firstSeq: number; lastSeq: number; key: string | null; closes: string | null }>;
    const inflight = rows.map((b) => ({ firstSeq: b.firstSeq, lastSeq: b.lastSeq, key: b.key ?? undefined, closes: b.closes ?? undefined }));
    return {
      name: r.name,
      cursor: r.cursor,
      state: r.state ?? undefined,
      inflight: inflight[0],
      inflightRanges: inflight,
      delivered: r.delivered,
      dropped: r.dropped,
      held: r.held ?? undefined,
      holdSeq: r.hold_seq ?? undefined,
    };
  }
}

/** The sink rows of the store. */
export class Cursors extends SinkReads {
  private readonly insert: Database.Statement;
  private readonly removeOthers: Database.Statement;
  private readonly removeOrphans: Database.Statement;
  private readonly addInflight: Database.Statement;
  private readonly clearInflight: Database.Statement;
  private readonly ackRow: Database.Statement;
  private readonly setStateRow: Database.Statement;
  private readonly min: Database.Statement;
  private readonly holdRow: Database.Statement;
  private readonly ackTx: Tx<[name: string, lastSeq: number, delivered: number, state: string | undefined, held: HeldGroups | undefined], void>;
  private readonly dropTx: Tx<[firstSeq: number, lastSeq: number], Map<string, number>>;

  constructor(
    private readonly state: StateDb,
    private readonly now: () => number,
  ) {
    super(state.db, 6);
    const db = state.db;
    this.insert = db.prepare('INSERT OR IGNORE INTO sinks (name, cursor, updated_ms) VALUES (?, ?, ?)');
    this.removeOthers = db.prepare('DELETE FROM sinks WHERE name NOT IN (SELECT value FROM json_each(?)) RETURNING name').pluck();
    this.removeOrphans = db.prepare('DELETE FROM inflight WHERE sink NOT IN (SELECT name FROM sinks)');
    this.addInflight = db.prepare('INSERT OR REPLACE INTO inflight (sink, first_seq, last_seq, batch_key, closes) VALUES (?, ?, ?, ?, ?)');
    this.clearInflight = db.prepare('DELETE FROM inflight WHERE sink = ? AND last_seq <= ?');
    this.ackRow = db.prepare('UPDATE sinks SET cursor = max(cursor, ?), state = coalesce(?, state), delivered = delivered + ?, updated_ms = ? WHERE name = ?');
    this.holdRow = db.prepare('UPDATE sinks SET held = ?, hold_seq = ? WHERE name = ?');
    this.setStateRow = db.prepare('UPDATE sinks SET state = ?, updated_ms = ? WHERE name = ?');
    // A sink holding lines in open groups keeps the journal from the first of them.
    this.min = db.prepare('SELECT min(CASE WHEN hold_seq IS NOT NULL AND hold_seq <= cursor THEN hold_seq - 1 ELSE cursor END) AS c FROM sinks');
    const lagging = db.prepare('SELECT name, @last - max(cursor, @first - 1) AS lost FROM sinks WHERE cursor < @last');
    const dropInflight = db.prepare('DELETE FROM inflight WHERE first_seq <= @last AND sink IN (SELECT name FROM sinks WHERE cursor < @last)');
    // Held lines among the dropped rows are gone: they no longer keep the journal.
    const drop = db.prepare(
      `UPDATE sinks SET dropped = dropped + @last - max(cursor, @first - 1), cursor = @last, updated_ms = @now,
         hold_seq = CASE WHEN hold_seq <= @last THEN NULL ELSE hold_seq END WHERE cursor < @last`,
    );
    this.ackTx = db.transaction((name: string, lastSeq: number, delivered: number, state: string | undefined, held: HeldGroups | undefined) =>
      this.advance(name, lastSeq, delivered, state, held),
    );
    this.dropTx = db.transaction((first: number, last: number) => {
      const lost = lagging.all({ first, last }) as { name: string; lost: number }[];
      dropInflight.run({ last });
      drop.run({ first, last, now: this.now() });
      return new Map(lost.filter((s) => s.lost > 0).map((s) => [s.name, s.lost]));
    });
  }

  /** Returns a sink's row, creating it at `startSeq` when the sink is new. */
  ensure(name: string, startSeq: number): SinkCursor {
    this.state.assertWritable();
    this.insert.run(name, startSeq, this.now());
    return this.get(name)!;
  }

  /** Removes the rows of sinks not in `names` (and their batches in flight); returns the names removed. */
  removeExcept(names: readonly string[]): string[] {
    const gone = (this.removeOthers.all(JSON.stringify(names)) as string[]).sort();
    this.removeOrphans.run();
    return gone;
  }

  /** Records the seq range of a batch about to be sent, its key, and the groups it closed besides its lines. */
  setInflight(name: string, firstSeq: number, lastSeq: number, key: string, closes?: string): void {
    this.state.assertWritable();
    this.addInflight.run(name, firstSeq, lastSeq, key, closes ?? null);
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
  ack(name: string, lastSeq: number, delivered: number, state: string | undefined, held?: HeldGroups): void {
    this.state.unsynced(this.ackTx, name, lastSeq, delivered, state, held);
  }

  /**
   * Moves the cursor past `lastSeq` and forgets the in-flight ranges it covers, with the
   * groups still held when given (inside the caller's transaction).
   */
  advance(name: string, lastSeq: number, delivered: number, state: string | undefined, held?: HeldGroups): void {
    this.ackRow.run(lastSeq, state ?? null, delivered, this.now(), name);
    this.clearInflight.run(name, lastSeq);
    if (held !== undefined) this.holdRow.run(held.json ?? null, held.holdSeq ?? null, name);
  }

  /** Stores a sink's state without moving its cursor. */
  setState(name: string, state: string): void {
    this.state.assertWritable();
    this.setStateRow.run(state, this.now(), name);
  }

  /** The slowest sink's cursor; null when there are no sinks. */
  minCursor(): number | null {
    this.state.assertWritable();
    return (this.min.get() as { c: number | null }).c;
  }

  /**
   * Moves every cursor below `lastSeq` to it, in one synced transaction, counting for each
   * sink the entries of [firstSeq, lastSeq] it had not delivered. Returns those counts.
   */
  moveLaggingPast(firstSeq: number, lastSeq: number): Map<string, number> {
    return this.state.synced(this.dropTx, firstSeq, lastSeq);
  }
}
