//! The file sink's committed state: what the files on disk must look like for the
//! sink's cursor to be true. It travels as a JSON string committed with the cursor.
import { z } from 'zod';
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
  since?: number | undefined;
  files: Record<string, ActiveFile>;
  rotated: RotatedFile[];
}

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const stateSchema: z.ZodType<FileSinkState> = z.object({
  v: z.literal(1),
  seq: count,
  since: count.optional(),
  files: z.record(z.string(), z.object({ off: count, created: z.number() })),
  rotated: z.array(z.object({ path: z.string(), from: z.string(), off: count, renamed: z.boolean() })),
});

/** Parses a committed state; `undefined` gives an empty state. Throws a {@link StateError} if it is not one. */
export function parseState(text: string | undefined): FileSinkState {
  if (text === undefined || text === '') return { v: 1, seq: 0, files: {}, rotated: [] };
  const bad = (why: string): StateError => new StateError('MLS_ERR_STATE_SINK', `the file sink's stored state is unusable (${why})`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const parsed = stateSchema.safeParse(raw);
  if (!parsed.success) throw bad(parsed.error.issues.map((i) => [...i.path, i.message].join(': ')).join('; '));
  return parsed.data;
}
