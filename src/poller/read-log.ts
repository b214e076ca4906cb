//! Which spans of a model were read, and when: what tells an entry found by a later read how
//! long after its own time an earlier read had already missed it (a lower bound of its
//! ingest delay). Bounded: the oldest records are merged into one that claims no more than
//! both did, so memory stays fixed per model.

/** A completed read of `[fromMs, toMs]` (inclusive) that started at `readAtMs`. */
interface Read {
  fromMs: number;
  toMs: number;
  readAtMs: number;
  /** How long after the end of its span the read was made, at least. */
  minAgeMs: number;
}

/** A bounded log of completed reads of one kind (fresh or early re-read) of one model. */
export class ReadLog {
  private readonly reads: Read[] = [];

  /** @param capacity records kept before the oldest two are merged */
  constructor(private readonly capacity = 32) {}

  /** Records held (for tests). */
  get length(): number {
    return this.reads.length;
  }

  /** The latest `toMs` logged; -Infinity when empty. */
  get maxToMs(): number {
    return Math.max(...this.reads.map((r) => r.toMs));
  }

  /** Logs a completed read of `[fromMs, toMs]` (inclusive) that started at `readAtMs`. */
  add(fromMs: number, toMs: number, readAtMs: number): void {
    if (this.reads.length === this.capacity) this.mergeOldest();
    // The window holds its last millisecond whole.
    this.reads.push({ fromMs, toMs, readAtMs, minAgeMs: readAtMs - toMs - 1 });
  }

  /** Drops records that end before `ms`. */
  trimBefore(ms: number): void {
    while (this.reads.length > 0 && this.reads[0]!.toMs < ms) this.reads.shift();
  }

  /**
   * How long after `tMs` the latest logged read covering `tMs` was made: a read that did not
   * return an entry of time `tMs` shows its delay exceeded this. Undefined when no logged
   * read covered `tMs`.
   */
  missedFor(tMs: number): number | undefined {
    const read = this.reads.findLast((r) => r.fromMs <= tMs && tMs < r.toMs + 1);
    return read && Math.max(read.minAgeMs, read.readAtMs - tMs);
  }

  /**
   * Merges the two oldest records: the union of their spans, read no later than the earlier
   * of the two, and at an age no greater than the smaller of theirs. Both bounds stay valid
   * for every time the union covers.
   */
  private mergeOldest(): void {
    const [a, b] = this.reads as [Read, Read];
    // Records with a gap between them are not merged (the union would claim the gap): the oldest goes.
    if (b.fromMs <= a.toMs + 1 && a.fromMs <= b.toMs + 1) {
      this.reads[1] = {
        fromMs: Math.min(a.fromMs, b.fromMs),
        toMs: Math.max(a.toMs, b.toMs),
        readAtMs: Math.min(a.readAtMs, b.readAtMs),
        minAgeMs: Math.min(a.minAgeMs, b.minAgeMs),
      };
    }
    this.reads.shift();
  }
}
