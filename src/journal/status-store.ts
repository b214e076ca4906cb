//! What a status snapshot reads from the state file: the daemon's store and the read-only
//! reader of `mls status` both give it.
import type { Checkpoint } from './checkpoint-reads.js';
import type { SinkCursor } from './cursors.js';

/** What a status snapshot reads (`buildStatus`). */
export interface StatusStore {
  /** The state file's installation id; undefined in a file that no version with one has written yet. */
  readonly installationId: string | undefined;
  /** Entries and approximate bytes in the journal. */
  journalSize(): { entries: number; bytes: number };
  /** Highest seq ever given out (0 when none). */
  lastSeq(): number;
  /** Dead letters per sink. */
  deadLetterCounts(): Map<string, { batches: number; entries: number }>;
  /** All checkpoints, by model id. */
  listCheckpoints(): Checkpoint[];
  /** All sink rows, by name. */
  listSinks(): SinkCursor[];
}
