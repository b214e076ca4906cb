//! The state file read-only, for the commands that only look (`mls status`, `mls dlq list`,
//! `mls state check`): opened as it is, never created, migrated or synced, and with no
//! write statement prepared. A running daemon's file can be read meanwhile (WAL).
import { existsSync } from 'node:fs';
import { AppliedSettingsReads } from './applied-settings.js';
import { CheckpointReads, type Checkpoint } from './checkpoint-reads.js';
import { SinkReads, type SinkCursor } from './cursors.js';
import { DeadLetterReads, type DeadLetter } from './dead-letters.js';
import { integrityCheck, openReadOnly, readInstallationId, schemaVersion, type DB } from './db.js';
import { readJournalTotals } from './entries.js';
import type { StatusStore } from './status-store.js';

/** A state file open read-only. Every read is of the file as it is now. */
export class StateReader implements StatusStore {
  readonly installationId: string | undefined;
  /** Model settings as last applied, and the history of applies (empty in a file of an older version). */
  readonly settings: AppliedSettingsReads;
  private readonly checkpoints: CheckpointReads;
  private readonly sinks: SinkReads;
  private readonly deadLetters: DeadLetterReads;

  private constructor(
    readonly path: string,
    private readonly db: DB,
  ) {
    this.installationId = readInstallationId(db);
    this.checkpoints = new CheckpointReads(db);
    this.sinks = new SinkReads(db, schemaVersion(db));
    this.deadLetters = new DeadLetterReads(db);
    this.settings = new AppliedSettingsReads(db);
    // Read once at open, as the store does: damaged journal pages then make a corrupt-file
    // error with the way out (see db.ts), not a bare SQLite error from the first command.
    readJournalTotals(db);
  }

  /**
   * Opens an existing state file read-only. A file that is missing, not a usable SQLite
   * database (an empty one included) or of a newer schema raises a StateError that names it
   * (and, when corrupt, says how to recover).
   */
  static open(path: string): StateReader {
    return openReadOnly(path, (db) => new StateReader(path, db));
  }

  getCheckpoint(modelId: string): Checkpoint | undefined {
    return this.checkpoints.get(modelId);
  }

  listCheckpoints(): Checkpoint[] {
    return this.checkpoints.list();
  }

  listSinks(): SinkCursor[] {
    return this.sinks.list();
  }

  journalSize(): { entries: number; bytes: number } {
    const { entries, bytes } = readJournalTotals(this.db);
    return { entries, bytes };
  }

  lastSeq(): number {
    return readJournalTotals(this.db).lastSeq;
  }

  /** Dead letters, oldest first, optionally of one sink. */
  listDeadLetters(sink?: string, limit = 1000): DeadLetter[] {
    return this.deadLetters.list(sink, limit);
  }

  deadLetterCounts(): Map<string, { batches: number; entries: number }> {
    return this.deadLetters.countsBySink();
  }

  /** Runs SQLite's integrity check; returns the problems found (empty when healthy). */
  integrityCheck(): string[] {
    return integrityCheck(this.db);
  }

  /** Closes the file. Idempotent. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * What `read` makes of the state file at `path`, opened read-only (see {@link StateReader.open})
 * and closed after; undefined when there is no file yet.
 */
export function readStateFile<T>(path: string, read: (reader: StateReader) => T): T | undefined {
  if (!existsSync(path)) return undefined;
  const reader = StateReader.open(path);
  try {
    return read(reader);
  } finally {
    reader.close();
  }
}
