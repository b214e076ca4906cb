//! Numbered schema migrations of the state file, applied in order at open.

/** The migrations in order: each one's `version` is stored in `PRAGMA user_version` once applied. */
export const MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      -- One row per model: where polling stands.
      CREATE TABLE checkpoints (
        model_id     TEXT PRIMARY KEY,
        start_ms     INTEGER NOT NULL,   -- resolved from start_at once, when the model was first seen
        watermark_ms INTEGER,            -- 'to' of the last completed window (NULL: none yet)
        win_from     INTEGER,            -- window in progress (NULL: none)
        win_to       INTEGER,
        next_token   TEXT,               -- token for the next page of the window in progress
        fetch_id     INTEGER NOT NULL DEFAULT 0,
        plan_state   TEXT,               -- planner state (JSON), e.g. the re-read frontiers
        plan_pending TEXT,               -- planner state to adopt when the window in progress completes
        last_entry_ns INTEGER,           -- newest entry time seen
        updated_ms   INTEGER NOT NULL
      );
      -- Occurrence counts of entry keys (see dedupe/), packed per model and second of entry time.
      CREATE TABLE dedupe (
        model_id   TEXT    NOT NULL,
        bucket_ms  INTEGER NOT NULL,     -- start of the second of entry times the keys belong to
        touched_ms INTEGER NOT NULL,     -- 'from' of the last window that returned one of the keys
        keys       BLOB    NOT NULL,     -- packed (time_ns, hash, delivered, seen, fetch_id) records
        PRIMARY KEY (model_id, bucket_ms)
      ) WITHOUT ROWID;
      -- Append-only journal of new entries: one row per committed page, holding the page's
      -- new entries with consecutive seqs [first_seq, last_seq]. Seqs never go backwards
      -- (the highest one given out is the last row's, or meta.last_seq once rows are deleted).
      CREATE TABLE journal (
        first_seq  INTEGER PRIMARY KEY,
        last_seq   INTEGER NOT NULL,
        model_id   TEXT    NOT NULL,
        count      INTEGER NOT NULL,
        bytes      INTEGER NOT NULL,
        fetched_ms INTEGER NOT NULL,
        entries    TEXT    NOT NULL      -- JSON array of [time, time_ns, stream, log]
      );
      -- One row per sink: the highest seq it acknowledged, plus its committed state.
      CREATE TABLE sinks (
        name           TEXT PRIMARY KEY,
        cursor         INTEGER NOT NULL,
        state          TEXT,
        delivered      INTEGER NOT NULL DEFAULT 0,
        dropped        INTEGER NOT NULL DEFAULT 0,
        updated_ms     INTEGER NOT NULL
      );
      -- Seq ranges of batches sent but not yet acknowledged, so a restart rebuilds the same batches.
      CREATE TABLE inflight (
        sink      TEXT    NOT NULL,
        first_seq INTEGER NOT NULL,
        last_seq  INTEGER NOT NULL,
        PRIMARY KEY (sink, first_seq)
      ) WITHOUT ROWID;
      -- Batches a sink rejected permanently, kept whole for inspection and replay.
      CREATE TABLE dlq (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        sink       TEXT    NOT NULL,
        first_seq  INTEGER NOT NULL,
        last_seq   INTEGER NOT NULL,
        count      INTEGER NOT NULL,
        error      TEXT    NOT NULL,
        created_ms INTEGER NOT NULL,
        entries    TEXT    NOT NULL,     -- JSON array of entries
        replay     INTEGER NOT NULL DEFAULT 0  -- 1: a running daemon should send it again
      );
      CREATE INDEX dlq_sink ON dlq (sink, id);
    `,
  },
  {
    version: 2,
    sql: `
      -- Rows written from this version on hold their entries as NDJSON lines (the text
      -- sinks write, UTF-8, stored as a blob) in entries, and the exact time of each entry
      -- in times (int64 per entry, little-endian). Rows without times keep the JSON array
      -- of version 1.
      ALTER TABLE journal ADD COLUMN times BLOB;
    `,
  },
  {
    version: 3,
    sql: `
      -- The dedupe table as an ordinary rowid table. A bucket's blob (28 bytes per key: about
      -- 7 KB for a second of 250 entries) is larger than the ~4 KB a WITHOUT ROWID row keeps
      -- in its leaf page, so every rewrite of a bucket there also freed and reallocated
      -- overflow pages; in a rowid table's leaf it fits whole (up to ~16 KB with 16 KiB pages)
      -- and a rewrite touches one page.
      CREATE TABLE dedupe_v3 (
        model_id   TEXT    NOT NULL,
        bucket_ms  INTEGER NOT NULL,
        touched_ms INTEGER NOT NULL,
        keys       BLOB    NOT NULL,
        UNIQUE (model_id, bucket_ms)
      );
      INSERT INTO dedupe_v3 (model_id, bucket_ms, touched_ms, keys) SELECT model_id, bucket_ms, touched_ms, keys FROM dedupe;
      DROP TABLE dedupe;
      ALTER TABLE dedupe_v3 RENAME TO dedupe;
    `,
  },
  {
    version: 4,
    sql: `
      -- No change to the tables: from this version on, dedupe buckets may be keyed by the
      -- current content hash, marked by a 4-byte trailer on the keys blob (dedupe/buckets.ts).
      -- Buckets without it keep the earlier hash until pruned. The version number stops an
      -- earlier mls, which would not know the trailer, from opening the file.
      SELECT 1;
    `,
  },
  {
    version: 5,
    sql: `
      -- Hashes of the next_tokens followed in the window in progress (space-separated hex),
      -- so that a token cycle is recognised across a crash, and the page count with them.
      ALTER TABLE checkpoints ADD COLUMN win_tokens TEXT;
      -- The Idempotency-Key a batch in flight was sent with: a batch rebuilt after a restart
      -- (or an upgrade) is sent again under the key it first had. NULL: a key derived as
      -- version 4 derived it (sink name and seq range only).
      ALTER TABLE inflight ADD COLUMN batch_key TEXT;
      -- The start_at setting (as written in the config) that start_ms was resolved from, or
      -- that was last reported as changed: a later change is said once, with both values.
      ALTER TABLE checkpoints ADD COLUMN start_at TEXT;
    `,
  },
  {
    version: 6,
    sql: `
      -- What a sink with processing holds in open multiline groups (JSON; NULL: nothing),
      -- committed with its cursor, and the lowest seq held: the journal keeps that line and
      -- every later one until the group closes and its record is acknowledged.
      ALTER TABLE sinks ADD COLUMN held TEXT;
      ALTER TABLE sinks ADD COLUMN hold_seq INTEGER;
      -- The groups a batch in flight closed besides its lines (by the model's checkpoint, or
      -- because the model stopped), so that a restart rebuilds the same records (JSON; NULL: none).
      ALTER TABLE inflight ADD COLUMN closes TEXT;
    `,
  },
  {
    version: 7,
    sql: `
      -- Model settings as mls last applied them (settings as code): one row per model and
      -- field, the value as JSON. The service cannot be read back, so this is what a plan
      -- compares the config with. (IF NOT EXISTS: a file rolled back to an earlier version
      -- number by hand, as tests of upgrades do, may still hold the tables.)
      CREATE TABLE IF NOT EXISTS applied_settings (
        model_id   TEXT    NOT NULL,
        field      TEXT    NOT NULL,
        value      TEXT    NOT NULL,
        applied_ms INTEGER NOT NULL,
        PRIMARY KEY (model_id, field)
      ) WITHOUT ROWID;
      -- Every apply of a model's settings: what was sent (or recorded) and how it ended.
      -- Kept to a bounded number of rows per model (applied-settings.ts).
      CREATE TABLE IF NOT EXISTS settings_history (
        id       INTEGER PRIMARY KEY AUTOINCREMENT,
        model_id TEXT    NOT NULL,
        at_ms    INTEGER NOT NULL,
        fields   TEXT    NOT NULL,   -- JSON object of the fields sent or recorded
        outcome  TEXT    NOT NULL,   -- applied | failed | recorded
        details  TEXT    NOT NULL    -- the service's details, or the error
      );
      CREATE INDEX IF NOT EXISTS settings_history_model ON settings_history (model_id, id);
    `,
  },
];
