//! Which spans of a model were read, and when: what tells an entry found by a later read how
//! long after its own time an earlier read had already missed it (a lower bound of its
//! ingest delay). Bounded: the oldest records are merged into one that claims no more than
//! both did, so memory stays fixed per model.

const FIELDS = 4; // fromMs, toMs, readAtMs, minAgeMs

/** A bounded log of completed reads of one kind (fresh or early re-read) of one model. */
export class ReadLog {
  private buf: Float64Array;
  private start = 0;
  private size = 0;

  /** @param capacity records kept before the oldest two are merged */
  constructor(private readonly capacity = 32) {
    this.buf = new Float64Array(Math.min(4, capacity) * FIELDS);
  }

  /** Records records held (for tests). */
  get length(): number {
    return this.size;
  }

  /** The latest `toMs` logged; -Infinity when empty. */
  get maxToMs(): number {
    let m = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < this.size; i++) m = Math.max(m, this.at(i, 1));
    return m;
  }

  /** Logs a completed read of `[fromMs, toMs]` (inclusive) that started at `readAtMs`. */
  add(fromMs: number, toMs: number, readAtMs: number): void {
    if (this.size === this.capacity) this.mergeOldest();
    if (this.size * FIELDS === this.buf.length) this.grow();
    const i = this.slot(this.size);
    this.buf[i] = fromMs;
    this.buf[i + 1] = toMs;
    this.buf[i + 2] = readAtMs;
    this.buf[i + 3] = readAtMs - toMs - 1; // the window holds its last millisecond whole
    this.size++;
  }

  /** Drops records that end before `ms`. */
  trimBefore(ms: number): void {
    while (this.size > 0 && this.at(0, 1) < ms) {
      this.start = (this.start + 1) % (this.buf.length / FIELDS);
      this.size--;
    }
  }

  /**
   * How long after `tMs` the latest logged read covering `tMs` was made: a read that did not
   * return an entry of time `tMs` shows its delay exceeded this. Undefined when no logged
   * read covered `tMs`.
   */
  missedFor(tMs: number): number | undefined {
    for (let k = this.size - 1; k >= 0; k--) {
      if (this.at(k, 0) <= tMs && tMs < this.at(k, 1) + 1) return Math.max(this.at(k, 3), this.at(k, 2) - tMs);
    }
    return undefined;
  }

  private at(k: number, field: number): number {
    return this.buf[this.slot(k) + field]!;
  }

  private slot(k: number): number {
    return ((this.start + k) % (this.buf.length / FIELDS)) * FIELDS;
  }

  /**
   * Merges the two oldest records: the union of their spans, read no later than the earlier
   * of the two, and at an age no greater than the smaller of theirs. Both bounds stay valid
   * for every time the union covers.
   */
  private mergeOldest(): void {
    const a = this.slot(0);
    const b = this.slot(1);
    const buf = this.buf;
    // Records with a gap between them are not merged (the union would claim the gap): the oldest goes.
    if (buf[b]! <= buf[a + 1]! + 1 && buf[a]! <= buf[b + 1]! + 1) {
      buf[b] = Math.min(buf[a]!, buf[b]!);
      buf[b + 1] = Math.max(buf[a + 1]!, buf[b + 1]!);
      buf[b + 2] = Math.min(buf[a + 2]!, buf[b + 2]!);
      buf[b + 3] = Math.min(buf[a + 3]!, buf[b + 3]!);
    }
    this.start = (this.start + 1) % (buf.length / FIELDS);
    this.size--;
  }

  private grow(): void {
    const n = Math.min(this.capacity, (this.buf.length / FIELDS) * 2);
    const next = new Float64Array(n * FIELDS);
    for (let k = 0; k < this.size; k++) next.set(this.buf.subarray(this.slot(k), this.slot(k) + FIELDS), k * FIELDS);
    this.buf = next;
    this.start = 0;
  }
}
