//! The entries of one simulated model (columns.ts keeps them): their generation up to "now",
//! the pages picked from a window, their rendering, and the traceback episodes served.
//!
//! With `plain` content each generated entry is one event with a content seed of its own; with
//! `python` content an event is a burst of consecutive lines (see content-python.ts) sharing
//! one seed, each line keeping its index in the burst.
import type { LogEntry } from '../records/entry.js';
import { hostileLine, renderContent } from './content.js';
import { episodeLines, layoutPython, lineStepNs, MAX_EVENT_LINES, renderPythonLine, startupSeed } from './content-python.js';
import type { ResolvedOptions } from './options.js';
import type { Prng } from './prng.js';
import { EntryColumns, INJECTED } from './columns.js';
import { offSpecEntry, offSpecKind, type OffSpecEntry } from './faults.js';
import { hashString, mixSeed } from './prng.js';
import { formatEntryTime, truncateTime } from './timefmt.js';

// The `part` of an entry of python content: its line index in the burst, and two flags.
const PART_INDEX = 0x3f;
/** The line belongs to a traceback episode. */
const PART_EPISODE = 0x40;
/** The line has been served in a complete page (kept for episode lines only). */
const PART_SERVED = 0x80;

// Times of the lines of the burst being generated (generation is synchronous).
const burstMs = new Float64Array(MAX_EVENT_LINES);
const burstNs = new Int32Array(MAX_EVENT_LINES);

/** A traceback episode of python content, as the ground truth tells it. */
export interface TracebackEpisode {
  /** The first line's time, as served. */
  time: string;
  /** The last line's time, as served. */
  timeEnd: string;
  stream: string;
  /** Consecutive entries of the stream, from the `logger.exception` line to the exception line. */
  lines: number;
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
export class ModelLog extends EntryColumns {
  private readonly injected: LogEntry[] = [];
  private nextNs = 0;
  private lastGenMs = -Infinity;
  private lastGenNs = 0;
  private stopAtMs = Infinity;
  /** Events generated so far (python content: the first is the model's start-up). */
  private events = 0;
  /** Traceback episodes some but not all of whose lines have been served: first line's seq → lines served. */
  private readonly episodesServed = new Map<number, number>();
  /** Draws which entries are served off the spec, from the model id alone. */
  private readonly offSpecSeed: number;

  /**
   * @param params how the model produces entries (the simulator's options, with the model's own rate)
   * @param nextMs time of the first entry to generate (then of the next one)
   */
  constructor(
    readonly id: string,
    private readonly params: ResolvedOptions,
    private readonly rng: Prng,
    private nextMs: number,
  ) {
    super();
    this.offSpecSeed = mixSeed(hashString(id), 0x0ff5);
    if (params.ratePerSec > 0) this.advance();
  }

  /** No entry (python content: no burst) with a time at or after `ms` will be generated. */
  stopAt(ms: number): void {
    this.stopAtMs = Math.min(this.stopAtMs, ms);
  }

  /** Generates every entry whose time is before `nowMs`. */
  generateUntil(nowMs: number): void {
    if (this.params.ratePerSec <= 0) return;
    const limit = Math.min(nowMs, this.stopAtMs);
    if (this.params.content === 'python') return this.generateBursts(limit);
    const p = this.params;
    const r = this.rng;
    while (this.nextMs < limit) {
      const late = p.lateArrivals;
      let delay = r.int(p.ingestDelayMs.min, p.ingestDelayMs.max);
      if (late?.share && r.next() < late.share) delay = r.int(late.delayMs.min, late.delayMs.max);
      // Generated times never decrease: a truncation may not move before the previous entry.
      const [ms, ns, digits] = this.writtenTime(this.nextMs, this.nextNs, 0, true);
      const twin = r.next() < p.twinRate;
      const content = r.nextU32();
      this.add(ms, ns, ms + delay, content, digits);
      if (twin) this.add(ms, ns, ms + r.int(p.ingestDelayMs.min, p.ingestDelayMs.max), content, digits);
      this.advance();
    }
  }

  /**
   * Generates the bursts of python content that start before `limit`. A burst's lines follow
   * each other by small steps, with strictly increasing times (a shortened time is kept only
   * when still after the line before, so that the order of a traceback's lines never rests on
   * the order of a page), and become visible together after the burst's delay; the next burst
   * starts after the last line, by a gap drawn for as many lines. Only one-line bursts get
   * identical twins: a repeated line inside a traceback would change its shape.
   */
  private generateBursts(limit: number): void {
    const p = this.params;
    const r = this.rng;
    while (this.nextMs < limit) {
      const drawn = r.nextU32();
      const seed = this.events++ === 0 ? startupSeed(drawn) : drawn;
      const n = layoutPython(seed);
      const episode = episodeLines();
      let ms = this.nextMs;
      let ns = this.nextNs;
      for (let k = 0; k < n; k++) {
        if (k > 0) {
          ns += lineStepNs(k, r.next());
          const carry = Math.floor(ns / 1e6);
          ns -= carry * 1e6;
          ms += carry;
        }
        burstMs[k] = ms;
        burstNs[k] = ns;
      }
      const visibleAt = ms + r.int(p.ingestDelayMs.min, p.ingestDelayMs.max);
      const twin = n === 1 && r.next() < p.twinRate;
      for (let k = 0; k < n; k++) {
        // Within a burst, a shortened time moves by less than a millisecond, as the lines do.
        const [lineMs, lineNs, digits] = this.writtenTime(burstMs[k]!, burstNs[k]!, n === 1 ? 0 : 3, false);
        this.add(lineMs, lineNs, visibleAt, seed, digits, k < episode ? k | PART_EPISODE : k);
        if (twin) this.add(lineMs, lineNs, lineMs + r.int(p.ingestDelayMs.min, p.ingestDelayMs.max), seed, digits, 0);
      }
      this.nextMs = ms;
      this.nextNs = ns;
      this.advance(n);
    }
  }

  /**
   * The time to write for a generated (ms, ns) and its fractional digits: with probability
   * `shortDigitsRate`, shortened to `minDigits`–8 digits when that keeps it after the last
   * generated time (or equal to it, with `ties`); it becomes the last generated time.
   */
  private writtenTime(ms: number, ns: number, minDigits: number, ties: boolean): [ms: number, ns: number, digits: number] {
    let out: [number, number, number] = [ms, ns, 9];
    if (this.rng.next() < this.params.shortDigitsRate) {
      const digits = this.rng.int(minDigits, 8);
      const t = truncateTime(ms, ns, digits);
      if (t.ms > this.lastGenMs || (t.ms === this.lastGenMs && (ties ? t.ns >= this.lastGenNs : t.ns > this.lastGenNs))) out = [t.ms, t.ns, digits];
    }
    [this.lastGenMs, this.lastGenNs] = out;
    return out;
  }

  /**
   * Marks entries as served in a complete page; returns how many traceback episodes (python
   * content) have now had every line served, each counted once.
   */
  markServed(indexes: readonly number[]): number {
    if (this.params.content !== 'python') return 0;
    let whole = 0;
    for (const i of indexes) {
      const part = this.part[i]!;
      if ((part & (PART_EPISODE | PART_SERVED)) !== PART_EPISODE) continue;
      this.part[i] = part | PART_SERVED;
      const first = this.seq[i]! - (part & PART_INDEX);
      const served = (this.episodesServed.get(first) ?? 0) + 1;
      layoutPython(this.cseed[i]!);
      if (served === episodeLines()) {
        whole++;
        this.episodesServed.delete(first);
      } else this.episodesServed.set(first, served);
    }
    return whole;
  }

  /** The traceback episodes (python content) visible at `nowMs`, in time order. */
  tracebacks(nowMs: number): TracebackEpisode[] {
    const out: TracebackEpisode[] = [];
    if (this.params.content !== 'python') return out;
    for (let i = 0; i < this.length; i++) {
      if ((this.part[i]! & (PART_EPISODE | PART_INDEX)) !== PART_EPISODE || this.vis[i]! > nowMs) continue;
      layoutPython(this.cseed[i]!);
      const lines = episodeLines();
      const lastSeq = this.seq[i]! + lines - 1;
      let j = i;
      while (j < this.length && this.seq[j] !== lastSeq) j++;
      if (j === this.length || this.vis[j]! > nowMs) continue;
      const { stream } = this.entry(i);
      out.push({ time: this.timeOf(i), timeEnd: this.timeOf(j), stream, lines });
    }
    return out;
  }

  private timeOf(i: number): string {
    return formatEntryTime(this.ms[i]!, this.ns[i]!, this.digits[i]!);
  }

  /** Adds an entry given by its text, visible from `visibleAt`. */
  inject(entry: LogEntry, ms: number, ns: number, visibleAt: number): void {
    this.injected.push({ time: entry.time, log: entry.log, stream: entry.stream });
    this.add(ms, ns, visibleAt, this.injected.length - 1, INJECTED);
  }

  /**
   * Picks up to `size` entries of the snapshot from index `start` whose millisecond is
   * ≤ `toMs`, and tells whether any remain after them.
   */
  slice(start: number, toMs: number, snap: Snapshot, size: number): PageSlice {
    const indexes: number[] = [];
    const { ms, vis, seq } = this;
    for (let i = start; i < this.length && ms[i]! <= toMs; i++) {
      if (seq[i]! >= snap.seq || vis[i]! > snap.time) continue;
      if (indexes.length === size) return { indexes, more: true };
      indexes.push(i);
    }
    return { indexes, more: false };
  }

  /** The entry's JSON text, rendered once and cached. */
  fragment(i: number): string {
    let f = this.frags[i];
    if (f === undefined) {
      const e = this.entry(i);
      // Slicing flattens V8's concatenation tree: the cached copy then takes half the
      // memory and is cheaper both to keep (GC) and to copy into a page.
      f = this.offSpec(i)?.json ?? ` {"time":"${e.time}","log":${JSON.stringify(e.log)},"stream":${JSON.stringify(e.stream)}}`.slice(1);
      this.frags[i] = f;
    }
    return f;
  }

  /** Entry `i` served off the spec, when it is: never an injected entry or a traceback's line. */
  private offSpec(i: number): OffSpecEntry | undefined {
    if (this.digits[i] === INJECTED || (this.part[i]! & PART_EPISODE) !== 0) return undefined;
    const kind = offSpecKind(this.params.offSpecRate, this.offSpecSeed, this.seq[i]!);
    return kind && offSpecEntry(kind, this.entry(i), this.seq[i]!);
  }

  /**
   * The entry as a reader of the spec ships it; one served off the spec also says why, and
   * its own time (what decides which windows return it).
   */
  shipped(i: number): LogEntry & { off_spec?: { reason: OffSpecEntry['reason']; time: string } } {
    const off = this.offSpec(i);
    return off ? { ...off.kept, off_spec: { reason: off.reason, time: this.entry(i).time } } : this.entry(i);
  }

  /** The entry as the service returns it. */
  entry(i: number): LogEntry {
    const d = this.digits[i]!;
    if (d === INJECTED) return { ...this.injected[this.cseed[i]!]! };
    const ms = this.ms[i]!;
    const ns = this.ns[i]!;
    const seed = this.cseed[i]!;
    const python = this.params.content === 'python';
    const { log, stream } = python ? renderPythonLine(seed, this.part[i]! & PART_INDEX, ms, ns) : renderContent(seed, this.params);
    // A burst of several lines (a traceback) stays whole: its shape is part of the ground truth.
    const hostile = this.params.hostileRate && (!python || layoutPython(seed) === 1) ? hostileLine(seed, this.params.hostileRate) : undefined;
    return { time: formatEntryTime(ms, ns, d), log: hostile ?? log, stream };
  }

  /** Moves the next event's time on by a gap drawn for `lines` entries at the model's rate. */
  private advance(lines = 1): void {
    const u = this.rng.next();
    const gapNs = Math.max(1, Math.round((-Math.log(1 - u) * 1e9 * lines) / this.params.ratePerSec));
    let ns = this.nextNs + gapNs;
    const carry = Math.floor(ns / 1e6);
    ns -= carry * 1e6;
    this.nextMs += carry;
    this.nextNs = ns;
  }
}
