//! The file sink's committed state: what the files on disk must look like for the
//! sink's cursor to be true. It travels as a JSON string committed with the cursor.
import { StateError } from '../../errors.js';

/** A file the sink appends to. */
export interface ActiveFile {
  /** Bytes of the file that belong to committed entries. */
  off: number;
  /** When the file was started (epoch ms), for `rotate.max_age`. */
  created: number;
}

/** A file renamed away from its active path by rotation, until it is final and compressed. */
export interface RotatedFile {
  /** The rotated file's path. */
  path: string;
  /** The active path it was renamed from. */
  from: string;
  /** Bytes of it that belong to committed entries. */
  off: number;
  /** Whether the rename is known to be done; if not, a restart completes it. */
  renamed: boolean;
}

/**
 * The serialised state. Version 1:
 * `{"v":1,"seq":N,"since":ms,"files":{"<path>":{"off":N,"created":ms}},"rotated":[{"path","from","off","renamed"}]}`.
 */
export interface FileSinkState {
  v: 1;
  /** Highest seq written into the files this state describes. */
  seq: number;
  /**
   * When this state began (epoch ms): a file not in it, last changed before then, holds
   * bytes the sink never wrote under it. Absent in states of earlier versions.
   */
  since?: number;
  files: Record<string, ActiveFile>;
  rotated: RotatedFile[];
}

/** An empty state: nothing written yet. */
export function emptyState(): FileSinkState {
  return { v: 1, seq: 0, files: {}, rotated: [] };
}

/** Deep copy. */
export function cloneState(s: FileSinkState): FileSinkState {
  const files: Record<string, ActiveFile> = {};
  for (const [p, f] of Object.entries(s.files)) files[p] = { off: f.off, created: f.created };
  return { v: 1, seq: s.seq, since: s.since, files, rotated: s.rotated.map((r) => ({ ...r })) };
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Parses a committed state; `undefined` gives an empty state. Throws a {@link StateError} if it is not one. */
export function parseState(text: string | undefined): FileSinkState {
  if (text === undefined || text === '') return emptyState();
  const bad = (why: string): StateError =>
    new StateError('MLS_ERR_STATE_SINK', `the file sink's stored state is unusable (${why})`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw bad('not JSON');
  }
  if (typeof raw !== 'object' || raw === null) throw bad('not an object');
  const o = raw as Record<string, unknown>;
  if (o.v !== 1) throw bad(`unknown version ${JSON.stringify(o.v)}`);
  if (!isCount(o.seq)) throw bad('seq');
  if (typeof o.files !== 'object' || o.files === null || Array.isArray(o.files)) throw bad('files');
  const state = emptyState();
  state.seq = o.seq;
  if (isCount(o.since)) state.since = o.since;
  for (const [p, f] of Object.entries(o.files as Record<string, unknown>)) {
    const ff = f as Record<string, unknown> | null;
    if (typeof ff !== 'object' || ff === null || !isCount(ff.off) || typeof ff.created !== 'number') throw bad(`files["${p}"]`);
    state.files[p] = { off: ff.off, created: ff.created };
  }
  if (!Array.isArray(o.rotated)) throw bad('rotated');
  for (const r of o.rotated as unknown[]) {
    const rr = r as Record<string, unknown> | null;
    if (typeof rr !== 'object' || rr === null || typeof rr.path !== 'string' || typeof rr.from !== 'string' || !isCount(rr.off) || typeof rr.renamed !== 'boolean') {
      throw bad('rotated entry');
    }
    state.rotated.push({ path: rr.path, from: rr.from, off: rr.off, renamed: rr.renamed });
  }
  return state;
}

/** Serialises a state for commit. */
export function serializeState(s: FileSinkState): string {
  return JSON.stringify(s);
}
