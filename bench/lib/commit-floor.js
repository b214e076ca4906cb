// The floor under the daemon's throughput on this machine's disk: what the steps between a
// fetched page and a durable journal row cost alone, on the benchmark's own pages, without
// HTTP, delivery or anything else in the way. Each is timed in this process over every page,
// two pages per commit (the daemon groups 2–3 pages per commit in the throughput run),
// median of three passes after one warm-up pass:
//   prepare      reading of the body, each entry's time and content hash (no SQLite)
//   commit_path  StateStore.commitPages as the daemon runs it (dedupe counts, the rendered
//                journal lines, the row, the checkpoint; synchronous = FULL), then the
//                sink's acknowledgement and the trim, as the file sink causes them
//   sqlite_full  the same journal bytes as a bare blob into a WAL-mode table, with the
//                daemon's page size and synchronous = FULL; earlier rows deleted as a sink
//                would — SQLite's own cost for a durable row, nothing of the daemon's
//   file_fdatasync the same bytes appended to a plain file, fdatasync per commit — the disk's
//                cost for making them durable, without SQLite
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { median, round } from './util.js';

const PAGES_PER_COMMIT = 2;
const PASSES = 3;
/** Pages a sink leaves behind before the trim reaches them (a 20,000-entry file batch). */
const LIVE_ROWS = 20;
/** Commits between two acknowledgements and trims. */
const TRIM_EVERY = LIVE_ROWS / PAGES_PER_COMMIT;

/** `items` in groups of one commit each. */
function* commits(items) {
  for (let i = 0; i < items.length; i += PAGES_PER_COMMIT) yield items.slice(i, i + PAGES_PER_COMMIT);
}

/** `bodies`: the raw response bodies of one fetch of the window, in order, per model. */
export async function measureCommitFloor(bodies, workDir) {
  const { createPageParser } = await import('../../dist/api/page/index.js');
  const { preparePage } = await import('../../dist/poller/prepare.js');
  const { StateStore } = await import('../../dist/journal/store.js');
  const windowFromMs = 0;
  // The reader the daemon of the same run uses (MLS_PAGE_PARSER).
  const readPage = createPageParser();
  const prepare = () => bodies.map(({ modelId, body }) => ({ modelId, page: preparePage(readPage(body, 200), windowFromMs) }));
  const pages = prepare();
  const entries = pages.reduce((n, p) => n + p.page.length, 0);
  // The journal lines each page becomes (every entry new), for the bare SQLite and file runs.
  const lines = pages.map(({ modelId, page }) => {
    const all = Uint32Array.from({ length: page.length }, (_, i) => i);
    return page.render(modelId, all, page.length);
  });
  const lineBytes = lines.reduce((n, b) => n + b.length, 0);

  const timed = (fn) => {
    const runs = [];
    for (let pass = 0; pass <= PASSES; pass++) {
      const dir = join(workDir, `floor-${pass}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const ms = fn(dir);
      if (pass > 0) runs.push((1000 * ms) / entries);
      rmSync(dir, { recursive: true, force: true });
    }
    return round(median(runs), 3);
  };

  const prepareUs = timed(() => {
    const t0 = performance.now();
    prepare();
    return performance.now() - t0;
  });

  const commitPathUs = timed((dir) => {
    const store = StateStore.open(join(dir, 'state.db'));
    try {
      const models = [...new Set(pages.map((p) => p.modelId))];
      const fetchIds = new Map();
      for (const m of models) {
        store.ensureCheckpoint(m, windowFromMs);
        fetchIds.set(m, store.beginWindow(m, windowFromMs, Date.now()).fetchId);
      }
      store.ensureSink('files');
      // The last seq after each commit: a sink acknowledges what it was LIVE_ROWS pages ago.
      const lastSeqs = [];
      const t0 = performance.now();
      for (const group of commits(pages)) {
        const results = store.commitPages(
          group.map(({ modelId, page }) => ({ modelId, fetchId: fetchIds.get(modelId), windowFromMs, entries: page, next: { nextToken: 'next' }, fetchedMs: Date.now() })),
        );
        lastSeqs.push(results.at(-1).lastSeq ?? lastSeqs.at(-1) ?? 0);
        const c = lastSeqs.length - 1;
        if (c % TRIM_EVERY === 0 && c >= TRIM_EVERY) {
          store.ack('files', lastSeqs[c - TRIM_EVERY], 0);
          store.trimJournal();
        }
      }
      return performance.now() - t0;
    } finally {
      store.close();
    }
  });

  const sqliteFullUs = timed((dir) => {
    const db = new Database(join(dir, 'bare.db'));
    try {
      db.pragma('page_size = 16384');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec('CREATE TABLE journal (seq INTEGER PRIMARY KEY, entries BLOB NOT NULL)');
      const insert = db.prepare('INSERT INTO journal (seq, entries) VALUES (?, ?)');
      const trim = db.prepare('DELETE FROM journal WHERE seq <= ?');
      const t0 = performance.now();
      let seq = 0;
      let c = 0;
      for (const group of commits(lines)) {
        db.transaction(() => {
          for (const bytes of group) insert.run(++seq, bytes);
        }).immediate();
        if (c % TRIM_EVERY === 0 && c >= TRIM_EVERY) db.transaction(() => trim.run(seq - LIVE_ROWS)).immediate();
        c++;
      }
      return performance.now() - t0;
    } finally {
      db.close();
    }
  });

  const fileUs = timed((dir) => {
    const fd = openSync(join(dir, 'journal.ndjson'), 'a');
    try {
      const t0 = performance.now();
      for (const group of commits(lines)) {
        for (const bytes of group) writeSync(fd, bytes);
        fdatasyncSync(fd);
      }
      return performance.now() - t0;
    } finally {
      closeSync(fd);
    }
  });

  return {
    pages: pages.length,
    entries,
    pages_per_commit: PAGES_PER_COMMIT,
    journal_line_bytes_per_entry: round(lineBytes / entries, 1),
    prepare_us_per_entry: prepareUs,
    commit_path_us_per_entry: commitPathUs,
    sqlite_full_us_per_entry: sqliteFullUs,
    file_fdatasync_us_per_entry: fileUs,
  };
}
