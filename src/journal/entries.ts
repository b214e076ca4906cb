//! The journal of new entries: one row per committed page, seqs consecutive and never
//! going backwards. Appends (inside a page's transaction), reads as page slices up to the
//! durable seq, recent pages held decoded (page-cache.ts), and deletion of the oldest rows.
import type Database from 'better-sqlite3';
import type { SinkEntry } from '../records/entry.js';
import type { DB, StateDb, Tx } from './db.js';
import { PageCache } from './page-cache.js';
import { JournalPage, packTimes, sliceEntries, unpackTimes, type PageSlice } from './pages.js';

/** Bytes a journal row takes per entry besides its NDJSON line (the packed time). */
const TIME_BYTES = 8;

/** The bytes a row of `n` entries counts for (the journal's bounds are in these). */
function rowBytes(lines: Buffer, n: number): number {
  return lines.length + n * TIME_BYTES;
}

/** Entries and bytes in the journal, and the highest seq ever given out (0 when none). */
export interface JournalTotals {
  entries: number;
  bytes: number;
  lastSeq: number;
}

/** Reads the journal's totals (the store once at open, the read-only reader at each call). */
export function readJournalTotals(db: DB): JournalTotals {
  // Once rows are deleted, the highest seq given out is kept in meta (see deleteThrough).
  return db
    .prepare(
      `SELECT coalesce(sum(count), 0) AS entries, coalesce(sum(bytes), 0) AS bytes,
         max(coalesce(max(last_seq), 0), coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_seq'), 0)) AS lastSeq FROM journal`,
    )
    .get() as JournalTotals;
}

interface JournalRow {
  first_seq: number;
  last_seq: number;
  model_id: string;
  fetched_ms: number;
}

/** The journal table of the store. */
export class JournalEntries {
  private count: number;
  private bytes: number;
  private readonly cache = new PageCache();
  /** The last seq of each model's newest row (rows deleted since keep no entry any sink still needs). */
  private readonly lastSeqOfModel = new Map<string, number>();
  private readonly append: Database.Statement;
  private readonly rowsFrom: Database.Statement;
  private readonly rowEntries: Database.Statement;
  private readonly oldestRows: Database.Statement;
  private readonly deleteTx: Tx<[seq: number], { n: number; b: number }>;

  constructor(private readonly state: StateDb) {
    const db = state.db;
    const totals = readJournalTotals(db);
    this.count = totals.entries;
    this.bytes = totals.bytes;
    state.start(totals.lastSeq);
    this.append = db.prepare('INSERT INTO journal (first_seq, last_seq, model_id, count, bytes, fetched_ms, entries, times) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    this.rowsFrom = db.prepare(
      'SELECT first_seq, last_seq, model_id, fetched_ms FROM journal WHERE first_seq >= coalesce((SELECT max(first_seq) FROM journal WHERE first_seq <= ?), 0) ORDER BY first_seq LIMIT 64',
    );
    this.rowEntries = db.prepare('SELECT entries, times FROM journal WHERE first_seq = ?');
    for (const r of db.prepare('SELECT model_id AS m, max(last_seq) AS s FROM journal GROUP BY model_id').all() as { m: string; s: number }[]) {
      this.lastSeqOfModel.set(r.m, r.s);
    }
    // Rows are taken, oldest first, while those before them hold fewer than the entries or the bytes asked for.
    this.oldestRows = db.prepare(
      `SELECT min(first_seq) AS firstSeq, max(last_seq) AS lastSeq FROM (SELECT first_seq, last_seq,
         sum(count) OVER w - count AS entriesBefore, sum(bytes) OVER w - bytes AS bytesBefore FROM journal WINDOW w AS (ORDER BY first_seq))
       WHERE entriesBefore < @entries OR bytesBefore < @bytes`,
    );
    const sumBelow = db.prepare('SELECT coalesce(sum(count), 0) AS n, coalesce(sum(bytes), 0) AS b FROM journal WHERE first_seq <= ? AND last_seq <= ?');
    const deleteBelow = db.prepare('DELETE FROM journal WHERE first_seq <= ? AND last_seq <= ?');
    const setLastSeq = db.prepare("INSERT INTO meta (key, value) VALUES ('last_seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    this.deleteTx = db.transaction((seq: number) => {
      const sum = sumBelow.get(seq, seq) as { n: number; b: number };
      if (sum.n > 0) {
        // The highest seq given out is the last row's last_seq; before rows go, it is kept in
        // meta, so seqs never go backwards even once the journal is empty. Written here
        // rather than with every page: one small page less in each commit's WAL frames. The
        // WAL keeps commits in order, so a power loss that undoes this also undoes the delete.
        setLastSeq.run(String(this.state.lastSeq));
        deleteBelow.run(seq, seq);
      }
      return sum;
    });
  }

  /** Entries and approximate bytes currently in the journal. */
  size(): { entries: number; bytes: number } {
    return { entries: this.count, bytes: this.bytes };
  }

  /**
   * Appends the kept entries of a page as one row with seqs `first`.. (inside the page's
   * transaction). Returns the page as sinks will read it.
   */
  appendPage(first: number, modelId: string, fetchedMs: number, lines: Buffer, times: BigInt64Array): JournalPage {
    const n = times.length;
    this.append.run(first, first + n - 1, modelId, n, rowBytes(lines, n), fetchedMs, lines, packTimes(times));
    return new JournalPage(first, modelId, fetchedMs, lines, times);
  }

  /** After the page's transaction committed: counts it, and keeps it for the sinks that read it next. */
  appended(page: JournalPage): void {
    this.lastSeqOfModel.set(page.modelId, page.lastSeq);
    this.count += page.count;
    this.bytes += rowBytes(page.bytes, page.count);
    this.cache.remember(page);
  }

  /** The highest seq of an entry of `modelId` in the journal (0: none since the journal was last emptied of it). */
  journaledThrough(modelId: string): number {
    return this.lastSeqOfModel.get(modelId) ?? 0;
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
   * their NDJSON lines reach `maxBytes` bytes (at least one entry is always taken). Only
   * durable entries are read.
   */
  slicesAfter(afterSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): PageSlice[] {
    const out: PageSlice[] = [];
    const durable = this.state.durableSeq;
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

  /** Journal pages from the one holding `seq` on, oldest first. */
  private *pagesFrom(seq: number): Generator<JournalPage> {
    // Recent pages from memory while they follow one another (a row's first seq is the last
    // seq of the row before it plus one): a sink keeping up reads no row header at all. They
    // stay in the order they were committed (moving each to the end at every read rebuilt
    // the cache's table over and over: garbage that outlived the young generation).
    for (let page = this.cache.get(seq); page; page = this.cache.get(seq)) {
      yield page;
      seq = page.lastSeq + 1;
      if (seq > this.state.lastSeq) return;
    }
    // Row headers 64 at a time; a page's text is read only when not cached.
    let rows = this.rowsFrom.all(seq) as JournalRow[];
    while (rows.length > 0) {
      for (const row of rows) yield this.decode(row);
      const next = rows[rows.length - 1]!.last_seq + 1;
      rows = (this.rowsFrom.all(next) as JournalRow[]).filter((r) => r.first_seq >= next);
    }
  }

  private decode(row: JournalRow): JournalPage {
    const cached = this.cache.get(row.first_seq);
    if (cached) return cached;
    const page = this.readPage(row);
    this.cache.remember(page);
    return page;
  }

  private readPage(row: JournalRow): JournalPage {
    const stored = this.rowEntries.get(row.first_seq) as { entries: Buffer | string; times: Uint8Array | null } | undefined;
    if (stored?.times) {
      const bytes = typeof stored.entries === 'string' ? Buffer.from(stored.entries) : stored.entries;
      return new JournalPage(row.first_seq, row.model_id, row.fetched_ms, bytes, unpackTimes(stored.times));
    }
    // A row written before rows held NDJSON: a JSON array of [time, time_ns, stream, log].
    const raw = JSON.parse(String(stored?.entries ?? '[]')) as Array<[string, string, string, string]>;
    const entries = raw.map((r, i) => ({ seq: row.first_seq + i, modelId: row.model_id, time: r[0], timeNs: BigInt(r[1]), stream: r[2], log: r[3], fetchedAtMs: row.fetched_ms }));
    return JournalPage.fromEntries(row.first_seq, row.model_id, row.fetched_ms, entries);
  }

  /**
   * The oldest rows that hold `entries` entries and `bytes` bytes (or all rows, if fewer):
   * the first seq of the oldest and the last seq of the newest of them.
   */
  oldest(entries: number, bytes: number): { firstSeq: number; lastSeq: number } | undefined {
    const span = this.oldestRows.get({ entries, bytes }) as { firstSeq: number | null; lastSeq: number | null };
    return span.firstSeq === null ? undefined : { firstSeq: span.firstSeq, lastSeq: span.lastSeq! };
  }

  /**
   * Deletes the rows wholly at or below `seq`; returns the entries and bytes deleted. The
   * delete does not wait for the disk: rows every sink has passed that come back after a
   * power loss are deleted again.
   */
  deleteThrough(seq: number): { n: number; b: number } {
    const res = this.state.unsynced(this.deleteTx, seq);
    this.cache.forgetThrough(seq);
    this.count -= res.n;
    this.bytes -= res.b;
    return res;
  }
}
