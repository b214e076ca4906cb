//! The processing of one sink's batches (DESIGN §6: group at delivery). Each model has its
//! own processor; a batch's lines go through it in seq order, and what closed comes out as
//! the batch's records. Lines still held in open groups are not lost when the cursor passes
//! them: the open groups are committed with the cursor (held.ts) and reopened from the
//! journal at the next start. A group also closes, between lines, when the model's
//! checkpoint has passed its last line by the maximum gap, or when the model stops; which
//! groups a batch closed so is recorded with the batch in flight, so that the batch rebuilt
//! after a crash holds the same records under the same key.
import type { PageSlice } from '../../journal/pages.js';
import type { SinkEntry } from '../../records/entry.js';
import { ModelProcessor, type Processed, type ProcessorOptions } from '../../processing/pipeline.js';
import { LEVELS, type Level } from '../../processing/types.js';
import { decodeHeld, encodeHeld, type HeldGroup } from './held.js';
import { FastLine, pushFast, type BatchRecord } from './fast-lines.js';

/** Where each model stands, as committed state says; the daemon provides it. */
export interface ModelProgress {
  /**
   * The model's checkpoint in entry time (ns since the epoch): the end of its last
   * completed window. Undefined before its first window completes.
   */
  watermarkNs(modelId: string): bigint | undefined;
  /**
   * The highest journal seq holding an entry of the model: the checkpoint says nothing new
   * to a sink that has not read through it (lines of the model may still be ahead of it).
   */
  journaledThrough(modelId: string): number;
  /** Whether the model no longer moves (paused, refused, or not configured any more). */
  stopped(modelId: string): boolean;
  /**
   * A group of the model waits for its checkpoint to pass it: the model should be polled
   * soon (at `poll.min_interval`), so that the group closes promptly. Optional.
   */
  hurry?(modelId: string): void;
}

/** Counts each model's records once, whichever sinks get them (`mls_model_log_records_total`). */
export interface RecordMeter {
  /** Whether this sink is the one that counts the model's records. */
  counts(sink: string, modelId: string): boolean;
  /** `n` records of the model at `level`, before any sink's filter. */
  record(modelId: string, level: Level | undefined, n: number): void;
  /** `n` records of the model showing an exception of `type`, before any sink's filter. */
  exception(modelId: string, type: string, n: number): void;
}

/** The settings of a sink's processing. */
export interface StageOptions {
  sink: string;
  /** The processor options of every model (the filter is the sink's own). */
  processor: Omit<ProcessorOptions, 'tally' | 'exceptionTally'>;
  /** `raw: true`: one record per entry as the journal holds it, with only redaction applied. */
  raw: boolean;
  /**
   * The processor has the built-in rules only, redacts nothing and filters on levels only:
   * lines are decided on their bytes where they can be (fast-lines.ts).
   */
  fast?: boolean;
  progress: ModelProgress;
  meter?: RecordMeter;
}

/** A group closed other than by a line: by the checkpoint (its watermark, ns) or because the model stopped (`null`). */
export type Close = [modelId: string, watermarkNs: string | null];

/** What one batch's lines (and closes) gave. */
export interface StageOutput {
  /** The records, as the sink receives them (lines decided on their bytes made records only if a sink reads them). */
  records: BatchRecord[];
  /** Lines the records hold. */
  lines: number;
  /** Records the sink's filter dropped, per model. */
  dropped: Map<string, number>;
  /** Groups closed besides by the lines, to record with the batch in flight. */
  closes: Close[];
}

/** The processing of one sink. */
export class ProcessingStage {
  readonly #o: StageOptions;
  readonly #processors = new Map<string, ModelProcessor>();
  /** Models with an open group. */
  readonly #open = new Set<string>();
  /** Records made in the current build, per model and level (index in LEVELS; the last: none), for the meter. */
  readonly #tally = new Map<string, Float64Array>();
  /** Records made in the current build per model and exception type, for the meter. */
  readonly #exceptions = new Map<string, Map<string, number>>();
  /** Models whose tally the current build may have changed (the meter reads only these). */
  readonly #tallied = new Set<string>();
  /**
   * Per open model, the watermark its groups were last checked against, with no line given
   * to its processor since: the same watermark closes nothing more, so the check is skipped
   * (a sink checks for closes at every commit, models' checkpoints move once a poll).
   */
  readonly #checkedAt = new Map<string, bigint>();

  constructor(options: StageOptions) {
    this.#o = options;
  }

  /** Whether some model holds an open group. */
  get holding(): boolean {
    return this.#open.size > 0;
  }

  /**
   * Reopens the groups committed with the cursor, reading their lines from the journal.
   * Returns how many of their lines the journal no longer held (dropped to make room).
   */
  restore(held: string | undefined, readRange: (firstSeq: number, lastSeq: number) => PageSlice[]): number {
    let missing = 0;
    for (const g of decodeHeld(held)) {
      const wanted = new Set(g.seqs);
      const bySeq = new Map<number, SinkEntry>();
      for (const s of readRange(Math.min(...g.seqs), Math.max(...g.seqs))) {
        for (const e of s.page.decode(s.from, s.to)) if (wanted.has(e.seq)) bySeq.set(e.seq, e);
      }
      const lines = g.seqs.flatMap((seq) => bySeq.get(seq) ?? []);
      missing += g.seqs.length - lines.length;
      if (lines.length === 0) continue;
      this.#processor(g.modelId).restore({ stream: g.stream, phase: g.phase, lines });
      this.#checkedAt.delete(g.modelId);
      this.#open.add(g.modelId);
    }
    return missing;
  }

  /**
   * Processes the lines of `slices` (the sink's models only, in seq order), read through
   * `throughSeq`; then applies `recorded` closes (a batch rebuilt after a restart) or
   * decides them from the models' progress; `closeAll` (a shutdown) closes every open group.
   */
  build(slices: readonly PageSlice[], throughSeq: number, recorded?: readonly Close[], closeAll = false): StageOutput {
    const out: StageOutput = { records: [], lines: 0, dropped: new Map(), closes: [] };
    for (const { page, from, to } of slices) {
      if (this.#o.raw) {
        this.#raw(out, page.decode(from, to));
        continue;
      }
      const p = this.#processor(page.modelId);
      this.#fed(page.modelId);
      if (this.#o.fast && inTimeOrder(page.timesNs, from, to)) this.#dropped(out, page.modelId, pushFast(p, page, from, to, out.records));
      else this.#take(out, page.modelId, p.push(page.decode(from, to)));
      this.#track(page.modelId, p);
    }
    if (!this.#o.raw) this.#close(out, throughSeq, recorded, closeAll);
    for (const r of out.records) out.lines += r instanceof FastLine ? 1 : (r.lines ?? 1);
    this.#meter();
    if (this.#o.progress.hurry) for (const modelId of this.#open) this.#o.progress.hurry(modelId);
    return out;
  }

  /** The open groups, to commit with the cursor. */
  held(): { json: string | undefined; holdSeq: number | undefined } {
    const groups: HeldGroup[] = [];
    for (const modelId of this.#open) {
      for (const g of this.#processors.get(modelId)!.openGroups()) groups.push({ modelId, stream: g.stream, phase: g.phase, seqs: g.lines.map((l) => l.seq) });
    }
    return encodeHeld(groups);
  }

  /** Lines held in open groups. */
  heldLines(): number {
    let n = 0;
    for (const modelId of this.#open) n += this.#processors.get(modelId)!.held().lines;
    return n;
  }

  #close(out: StageOutput, throughSeq: number, recorded: readonly Close[] | undefined, closeAll: boolean): void {
    if (recorded !== undefined) {
      for (const close of recorded) {
        const p = this.#processors.get(close[0]);
        if (p === undefined) continue;
        this.#fed(close[0]);
        this.#take(out, close[0], close[1] === null ? p.flush() : p.advance(BigInt(close[1])));
        this.#track(close[0], p);
      }
      out.closes = [...recorded];
      return;
    }
    const { progress } = this.#o;
    for (const modelId of [...this.#open]) {
      const p = this.#processors.get(modelId)!;
      let close: Close | undefined;
      let closed: Processed | undefined;
      if (closeAll || progress.stopped(modelId)) {
        close = [modelId, null];
        closed = p.flush();
        this.#fed(modelId);
      } else if (throughSeq >= progress.journaledThrough(modelId)) {
        const watermark = progress.watermarkNs(modelId);
        if (watermark === undefined || this.#checkedAt.get(modelId) === watermark) continue;
        this.#checkedAt.set(modelId, watermark);
        close = [modelId, watermark.toString()];
        closed = p.advance(watermark);
        this.#tallied.add(modelId);
      }
      if (close === undefined || closed === undefined || closed.records.length + closed.dropped === 0) continue;
      out.closes.push(close);
      this.#take(out, modelId, closed);
      this.#track(modelId, p);
    }
  }

  #processor(modelId: string): ModelProcessor {
    let p = this.#processors.get(modelId);
    if (p === undefined) {
      const tally = new Float64Array(LEVELS.length + 1);
      const exceptionTally = new Map<string, number>();
      this.#tally.set(modelId, tally);
      this.#exceptions.set(modelId, exceptionTally);
      p = new ModelProcessor({ ...this.#o.processor, modelId, ...(this.#o.meter ? { tally, exceptionTally } : {}) });
      this.#processors.set(modelId, p);
    }
    return p;
  }

  /** Hands the build's tally to the meter (asked per build: which sink counts a model can change at a reload). */
  #meter(): void {
    const { meter, sink } = this.#o;
    if (meter !== undefined) {
      for (const modelId of this.#tallied) {
        const tally = this.#tally.get(modelId);
        if (tally === undefined) continue;
        for (let i = 0; i < tally.length; i++) {
          if (tally[i] === 0) continue;
          if (meter.counts(sink, modelId)) meter.record(modelId, LEVELS[i], tally[i]!);
          tally[i] = 0;
        }
        const exceptions = this.#exceptions.get(modelId)!;
        if (exceptions.size > 0 && meter.counts(sink, modelId)) for (const [type, n] of exceptions) meter.exception(modelId, type, n);
        exceptions.clear();
      }
    }
    this.#tallied.clear();
  }

  /** The model's processor is given lines or closes other than by a new watermark: its next check is due, its tally to be read. */
  #fed(modelId: string): void {
    this.#checkedAt.delete(modelId);
    this.#tallied.add(modelId);
  }

  #track(modelId: string, p: ModelProcessor): void {
    if (p.openFirstSeq() === undefined) {
      this.#open.delete(modelId);
      this.#checkedAt.delete(modelId);
    } else this.#open.add(modelId);
  }

  #take(out: StageOutput, modelId: string, processed: Processed): void {
    for (const r of processed.records) {
      if (r.modelId !== modelId) throw new Error(`bug: a record of ${r.modelId} from the processor of ${modelId}`);
      out.records.push(r);
    }
    this.#dropped(out, modelId, processed.dropped);
  }

  #dropped(out: StageOutput, modelId: string, n: number): void {
    if (n > 0) out.dropped.set(modelId, (out.dropped.get(modelId) ?? 0) + n);
  }

  #raw(out: StageOutput, lines: readonly SinkEntry[]): void {
    const redact = this.#o.processor.redact;
    for (const e of lines) {
      const log = redact ? redact(e.log) : e.log;
      out.records.push(log === e.log ? e : { ...e, log });
    }
  }
}

/** Whether the times of entries [from, to) do not go back. */
function inTimeOrder(times: BigInt64Array, from: number, to: number): boolean {
  for (let i = from + 1; i < to; i++) if (times[i - 1]! > times[i]!) return false;
  return true;
}
