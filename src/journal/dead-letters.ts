//! The dead-letter table: batches a sink rejected for good, kept whole for inspection and
//! replay (`mls dlq`, or a running daemon asked to send them again).
import type Database from 'better-sqlite3';
import type { SinkEntry } from '../records/entry.js';
import type { Cursors, HeldGroups } from './cursors.js';
import type { DB, StateDb, Tx } from './db.js';

/** A dead-lettered batch, or one record of a batch whose sink could not encode it. */
export interface DeadLetter {
  id: number;
  sink: string;
  firstSeq: number;
  lastSeq: number;
  /** Journal entries it holds (a record of a traceback holds several; the unit of every sink metric). */
  count: number;
  error: string;
  createdMs: number;
  entries: SinkEntry[];
}

/** Entries to dead-letter together, and why. */
export interface Letter {
  firstSeq: number;
  lastSeq: number;
  entries: readonly SinkEntry[];
  error: string;
}

/** How the sink's cursor moves with dead letters: to `lastSeq`, with what was delivered besides and the sink's state. */
export interface LetterAck {
  lastSeq: number;
  delivered: number;
  state: string | undefined;
  held: HeldGroups | undefined;
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

/** Errors are kept up to this many characters. */
const MAX_ERROR = 2000;

/** Dead letters as the file holds them (the store's and the read-only reader's). */
export class DeadLetterReads {
  private readonly some: Database.Statement;
  private readonly counts: Database.Statement;

  constructor(db: DB) {
    this.some = db.prepare('SELECT * FROM dlq WHERE @sink IS NULL OR sink = @sink ORDER BY id LIMIT @limit');
    this.counts = db.prepare('SELECT sink, count(*) AS b, sum(count) AS e FROM dlq GROUP BY sink');
  }

  /** Dead letters, oldest first, optionally of one sink. */
  list(sink?: string, limit = 1000): DeadLetter[] {
    return (this.some.all({ sink: sink ?? null, limit }) as DlqRow[]).map(toDeadLetter);
  }

  /** Counts of dead letters per sink. */
  countsBySink(): Map<string, { batches: number; entries: number }> {
    const rows = this.counts.all() as { sink: string; b: number; e: number }[];
    return new Map(rows.map((r) => [r.sink, { batches: r.b, entries: r.e }]));
  }
}

/** The dead letters of the store. */
export class DeadLetters extends DeadLetterReads {
  private readonly deleteSome: Database.Statement;
  private readonly replay: Database.Statement;
  private readonly keep: Database.Statement;
  private readonly next: Database.Statement;
  private readonly addTx: Tx<[name: string, letters: readonly Letter[], ack: LetterAck], void>;

  constructor(
    private readonly state: StateDb,
    cursors: Cursors,
    private readonly now: () => number,
  ) {
    super(state.db);
    const db = state.db;
    const insert = db.prepare('INSERT INTO dlq (sink, first_seq, last_seq, count, error, created_ms, entries) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.deleteSome = db.prepare('DELETE FROM dlq WHERE id IN (SELECT value FROM json_each(?))');
    this.replay = db.prepare('UPDATE dlq SET replay = 1 WHERE @sink IS NULL OR sink = @sink');
    this.keep = db.prepare('UPDATE dlq SET replay = 0, error = ? WHERE id = ?');
    this.next = db.prepare('SELECT * FROM dlq WHERE sink = ? AND replay = 1 ORDER BY id LIMIT 1');
    this.addTx = db.transaction((name: string, letters: readonly Letter[], ack: LetterAck) => {
      for (const { firstSeq, lastSeq, entries, error } of letters) {
        // Exact times as strings; so is any other BigInt an entry holds, rather than failing the write.
        const json = JSON.stringify(entries, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
        const count = entries.reduce((n, e) => n + (e.lines ?? 1), 0);
        insert.run(name, firstSeq, lastSeq, count, error.slice(0, MAX_ERROR), this.now(), json);
      }
      cursors.advance(name, ack.lastSeq, ack.delivered, ack.state, ack.held);
    });
  }

  /** Stores dead letters and moves the sink's cursor past them (with the groups it still holds), in one synced transaction. */
  add(name: string, letters: readonly Letter[], ack: LetterAck): void {
    this.state.synced(this.addTx, name, letters, ack);
  }

  /** Deletes dead letters by id; returns how many were deleted. */
  delete(ids: readonly number[]): number {
    return this.deleteSome.run(JSON.stringify(ids)).changes;
  }

  /** Marks dead letters (all, or one sink's) for a running daemon to send again. Returns how many. */
  requestReplay(sink?: string): number {
    return this.replay.run({ sink: sink ?? null }).changes;
  }

  /** Clears the replay mark of a dead letter whose replay failed, recording the new error. */
  keepForLater(id: number, error: string): void {
    this.keep.run(error.slice(0, MAX_ERROR), id);
  }

  /** The oldest dead letter of `sink` marked for replay, if any. */
  nextReplay(sink: string): DeadLetter | undefined {
    const row = this.next.get(sink) as DlqRow | undefined;
    return row ? toDeadLetter(row) : undefined;
  }
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
