//! The entries of one simulated model, kept columnar and sorted by (time, sequence), and the
//! searches over them.
//!
//! Each entry costs a few typed-array slots until it is first served, then also its cached
//! JSON text. Keep `history × rate × models` below about 5 million entries.

/** Marks an entry whose content was injected rather than generated (in `digits`). */
export const INJECTED = 255;

/** The columns of a model's entries; {@link ModelLog} fills them. */
export abstract class EntryColumns {
  length = 0;
  nextSeq = 0;
  protected cap = 0;
  protected ms = new Float64Array(0);
  protected ns = new Int32Array(0);
  /** When the entry becomes visible, epoch ms. */
  protected vis = new Float64Array(0);
  protected seq = new Uint32Array(0);
  /** The content seed, or an index in the injected entries. */
  protected cseed = new Uint32Array(0);
  /** Fractional digits of the time (0–9), or {@link INJECTED}. */
  protected digits = new Uint8Array(0);
  /** Python content: the line's index in its burst, and flags (store.ts). */
  protected part = new Uint8Array(0);
  /** The JSON text of each entry served so far. */
  protected frags: (string | undefined)[] = [];

  /** Index of the first entry whose millisecond is ≥ `fromMs`. */
  lowerBoundMs(fromMs: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ms[mid]! < fromMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first entry ordered after (ms, ns, seq). */
  afterKey(ms: number, ns: number, seq: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.ms[mid]!;
      const after = m > ms || (m === ms && (this.ns[mid]! > ns || (this.ns[mid] === ns && this.seq[mid]! > seq)));
      if (after) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The (ms, ns, seq) key of an entry, to resume after it. */
  key(i: number): [number, number, number] {
    return [this.ms[i]!, this.ns[i]!, this.seq[i]!];
  }

  /** Indexes of every entry visible at `nowMs`, in time order. */
  visibleIndexes(nowMs: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.length; i++) if (this.vis[i]! <= nowMs) out.push(i);
    return out;
  }

  /** Adds an entry with the next seq, in (time, seq) order: one older than the last is inserted. */
  protected add(ms: number, ns: number, visibleAt: number, content: number, digits: number, part = 0): void {
    if (this.length === this.cap) this.grow();
    const n = this.length;
    let pos = n;
    if (n > 0 && (this.ms[n - 1]! > ms || (this.ms[n - 1] === ms && this.ns[n - 1]! > ns))) {
      pos = this.afterKey(ms, ns, Number.MAX_SAFE_INTEGER);
      for (const a of [this.ms, this.ns, this.vis, this.seq, this.cseed, this.digits, this.part]) a.copyWithin(pos + 1, pos, n);
      this.frags.splice(pos, 0, undefined);
    } else {
      this.frags.push(undefined);
    }
    this.ms[pos] = ms;
    this.ns[pos] = ns;
    this.vis[pos] = visibleAt;
    this.seq[pos] = this.nextSeq++;
    this.cseed[pos] = content;
    this.digits[pos] = digits;
    this.part[pos] = part;
    this.length = n + 1;
  }

  private grow(): void {
    this.cap = Math.max(1024, this.cap * 2);
    this.ms = grown(this.ms, this.cap);
    this.ns = grown(this.ns, this.cap);
    this.vis = grown(this.vis, this.cap);
    this.seq = grown(this.seq, this.cap);
    this.cseed = grown(this.cseed, this.cap);
    this.digits = grown(this.digits, this.cap);
    this.part = grown(this.part, this.cap);
  }
}

/** A typed array of `length` elements that starts with `a`'s. */
function grown<T extends Float64Array | Int32Array | Uint32Array | Uint8Array>(a: T, length: number): T {
  const out = new (a.constructor as new (n: number) => T)(length);
  out.set(a);
  return out;
}
