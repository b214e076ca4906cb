//! The entries of one simulated model, kept columnar and sorted by (time, sequence).
//!
//! Each entry costs about 40 bytes until it is first served, then also its cached JSON
//! text. Keep `history × rate × models` below about 5 million entries.
import type { LogEntry } from '../records/entry.js';
import { renderContent, type ContentRates } from './content.js';
import type { Prng } from './prng.js';
import { formatEntryTime, truncateTime } from './timefmt.js';

/** Marks an entry whose content was injected rather than generated. */
const INJECTED = 255;

/** How a model produces entries. */
export interface GenerationParams {
  ratePerSec: number;
  delayMin: number;
  delayMax: number;
  /** Share of entries visible after a delay in [lateMin, lateMax] instead (0: none; no draw is made). */
  lateShare?: number;
  lateMin?: number;
  lateMax?: number;
  twinRate: number;
  /** Share of generated entries whose time is written with fewer than nine fractional digits. */
  shortDigitsRate: number;
  content: ContentRates;
}

/** A visibility snapshot: entries added at or after `seq`, or visible after `time`, are outside it. */
export interface Snapshot {
  time: number;
  seq: number;
}

/** One page worth of entries picked from a window. */
export interface PageSlice {
  indexes: number[];
  /** True when entries of the snapshot remain after the last picked one. */
  more: boolean;
}

/** The entries of one model: generated lazily up to "now", plus injected ones. */
export class ModelLog {
  readonly id: string;
  length = 0;
  nextSeq = 0;
  private cap = 0;
  private ms = new Float64Array(0);
  private ns = new Int32Array(0);
  private vis = new Float64Array(0);
  private seq = new Uint32Array(0);
  private cseed = new Uint32Array(0);
  private digits = new Uint8Array(0);
  private frags: (string | undefined)[] = [];
  private readonly injected: LogEntry[] = [];

  private readonly params: GenerationParams;
  private readonly rng: Prng;
  /** Time of the next entry to generate. */
  private nextMs: number;
  private nextNs: number;
  private lastGenMs = -Infinity;
  private lastGenNs = 0;
  private stopAtMs = Infinity;

  constructor(id: string, params: GenerationParams, rng: Prng, startMs: number) {
    this.id = id;
    this.params = params;
    this.rng = rng;
    this.nextMs = startMs;
    this.nextNs = 0;
    if (params.ratePerSec > 0) this.advance();
  }

  /** No entry with a time at or after `ms` will be generated. */
  stopAt(ms: number): void {
    this.stopAtMs = Math.min(this.stopAtMs, ms);
  }

  /** Generates every entry whose time is before `nowMs`. */
  generateUntil(nowMs: number): void {
    if (this.params.ratePerSec <= 0) return;
    const limit = Math.min(nowMs, this.stopAtMs);
    const p = this.params;
    const r = this.rng;
    while (this.nextMs < limit) {
      let ms = this.nextMs;
      let ns = this.nextNs;
      let delay = r.int(p.delayMin, p.delayMax);
      if (p.lateShare && r.next() < p.lateShare) delay = r.int(p.lateMin ?? 0, p.lateMax ?? 0);
      let digits = 9;
      if (r.next() < p.shortDigitsRate) {
        const d = r.int(0, 8);
        const t = truncateTime(ms, ns, d);
        // Keep generated times non-decreasing: a truncation may not move before the previous entry.
        if (t.ms > this.lastGenMs || (t.ms === this.lastGenMs && t.ns >= this.lastGenNs)) {
          ms = t.ms;
          ns = t.ns;
          digits = d;
        }
      }
      const twin = r.next() < p.twinRate;
      const content = r.nextU32();
      this.add(ms, ns, ms + delay, content, digits);
      if (twin) this.add(ms, ns, ms + r.int(p.delayMin, p.delayMax), content, digits);
      this.lastGenMs = ms;
      this.lastGenNs = ns;
      this.advance();
    }
  }

  /** Adds an entry given by its text, visible from `visibleAt`. */
  inject(entry: LogEntry, ms: number, ns: number, visibleAt: number): void {
    this.injected.push({ time: entry.time, log: entry.log, stream: entry.stream });
    this.add(ms, ns, visibleAt, this.injected.length - 1, INJECTED);
  }

  /** The snapshot of this model as of `nowMs` (after generating up to it). */
  snapshot(nowMs: number): Snapshot {
    return { time: nowMs, seq: this.nextSeq };
  }

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

  /**
   * Picks up to `size` entries of the snapshot from index `start` whose millisecond is
   * ≤ `toMs`, and tells whether any remain after them.
   */
  slice(start: number, toMs: number, snap: Snapshot, size: number): PageSlice {
    const indexes: number[] = [];
    const { ms, vis, seq } = this;
    const n = this.length;
    let i = start;
    for (; i < n && ms[i]! <= toMs && indexes.length < size; i++) {
      if (seq[i]! < snap.seq && vis[i]! <= snap.time) indexes.push(i);
    }
    let more = false;
    for (; i < n && ms[i]! <= toMs; i++) {
      if (seq[i]! < snap.seq && vis[i]! <= snap.time) {
        more = true;
        break;
      }
    }
    return { indexes, more };
  }

  /** The (ms, ns, seq) key of an entry, to resume after it. */
  key(i: number): [number, number, number] {
    return [this.ms[i]!, this.ns[i]!, this.seq[i]!];
  }

  /** The entry's JSON text, rendered once and cached. */
  fragment(i: number): string {
    let f = this.frags[i];
    if (f === undefined) {
      const e = this.entry(i);
      // Slicing flattens V8's concatenation tree: the cached copy then takes half the
      // memory and is cheaper both to keep (GC) and to copy into a page.
      f = ` {"time":"${e.time}","log":${JSON.stringify(e.log)},"stream":${JSON.stringify(e.stream)}}`.slice(1);
      this.frags[i] = f;
    }
    return f;
  }

  /** The entry as the service returns it. */
  entry(i: number): LogEntry {
    const d = this.digits[i]!;
    if (d === INJECTED) return { ...this.injected[this.cseed[i]!]! };
    const { log, stream } = renderContent(this.cseed[i]!, this.params.content);
    return { time: formatEntryTime(this.ms[i]!, this.ns[i]!, d), log, stream };
  }

  /** Indexes of every entry visible at `nowMs`, in time order. */
  visibleIndexes(nowMs: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.length; i++) if (this.vis[i]! <= nowMs) out.push(i);
    return out;
  }

  private advance(): void {
    const u = this.rng.next();
    const gapNs = Math.max(1, Math.round((-Math.log(1 - u) * 1e9) / this.params.ratePerSec));
    let ns = this.nextNs + gapNs;
    const carry = Math.floor(ns / 1e6);
    ns -= carry * 1e6;
    this.nextMs += carry;
    this.nextNs = ns;
  }

  private add(ms: number, ns: number, visibleAt: number, content: number, digits: number): void {
    if (this.length === this.cap) this.grow();
    const n = this.length;
    let pos = n;
    if (n > 0 && (this.ms[n - 1]! > ms || (this.ms[n - 1] === ms && this.ns[n - 1]! > ns))) {
      pos = this.afterKey(ms, ns, Number.MAX_SAFE_INTEGER);
      for (const a of [this.ms, this.ns, this.vis, this.seq, this.cseed, this.digits]) a.copyWithin(pos + 1, pos, n);
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
    this.length = n + 1;
  }

  private grow(): void {
    const cap = Math.max(1024, this.cap * 2);
    const g = <T extends Float64Array | Int32Array | Uint32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const a = make(cap);
      a.set(old);
      return a;
    };
    this.ms = g(this.ms, (k) => new Float64Array(k));
    this.ns = g(this.ns, (k) => new Int32Array(k));
    this.vis = g(this.vis, (k) => new Float64Array(k));
    this.seq = g(this.seq, (k) => new Uint32Array(k));
    this.cseed = g(this.cseed, (k) => new Uint32Array(k));
    this.digits = g(this.digits, (k) => new Uint8Array(k));
    this.cap = cap;
  }
}
