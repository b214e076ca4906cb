//! Logging lines that may head a traceback, held by the processor as (line index, level)
//! while the next lines of their stream show whether a traceback follows (see `pushLines`).

/** The streams whose lines are decided on their bytes. */
export const STREAMS = ['stdout', 'stderr'] as const;

/** The headings `ModelProcessor.pushLines` holds: one line (index, level) per stream at most; lines it decides on their bytes are on stdout or stderr. */
export class PendingHeadings {
  /** Held: how many; per stream (stdout, stderr) the line's index (-1: none) and level. */
  count = 0;
  readonly #index = new Int32Array([-1, -1]);
  readonly #level = new Int8Array(2);
  /** The level of the line {@link take} returned last. */
  level = 0;

  /** Holds line `index` of `stream` at `level` (index in LEVELS); one per stream at most. */
  hold(stream: string, index: number, level: number): void {
    const k = stream === 'stdout' ? 0 : stream === 'stderr' ? 1 : -1;
    if (k < 0 || this.#index[k]! >= 0) throw new Error(`bug: a held heading on ${stream} where none can be`);
    this.#index[k] = index;
    this.#level[k] = level;
    this.count++;
  }

  /** The index of the line held for `stream`, no longer held (its level in {@link level}); -1 when none. */
  take(stream: string): number {
    const k = stream === 'stdout' ? 0 : stream === 'stderr' ? 1 : -1;
    if (k < 0) return -1;
    const index = this.#index[k]!;
    if (index < 0) return -1;
    this.#index[k] = -1;
    this.level = this.#level[k]!;
    this.count--;
    return index;
  }
}
