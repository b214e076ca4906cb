//! Multiline grouping: the 10–40 log entries of one Python traceback (or of a block matched by
//! a custom rule) become one record. Groups close by data alone — a line that does not carry
//! them on, the model's checkpoint passing their last line by the maximum gap, a size cap — so
//! the same lines always give the same records, whatever the clock and the page boundaries.
import type { ProcessLine } from './types.js';
import { groupedRecord, recordTimeOrder, type ClosedBy, type GroupedRecord, type OpenGroupSnapshot } from './grouped-record.js';
import { positiveInteger, type MultilineOptions, type MultilineRule } from './multiline-options.js';
import { defaultHeadsBlock, pythonContinues, pythonOpens, type BlockPhase } from './multiline-python.js';

interface OpenGroup {
  lines: ProcessLine[];
  phase: BlockPhase;
  /** UTF-8 bytes of the lines joined by `\n`. */
  bytes: number;
  minSeq: number;
}

interface StreamState {
  open: OpenGroup | undefined;
  /** The time of the last line pushed on the stream. */
  lastNs: bigint;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}


/**
 * Groups the lines of one model, per stream, into records. Feed it lines in time order; it holds
 * the lines of open groups and returns each record when it closes. Lines of one stream never
 * join or close a group of another.
 *
 * Determinism: the same calls give the same records. An `advance(w)` whose watermark is not
 * later than any line still to come changes no grouping: it only closes earlier a group the
 * next line of its stream would have closed by gap, or one `flush` would have closed (then
 * `gap` instead of `flush`). A line older than the last line already pushed on its stream (a
 * late re-read) leaves the open group alone: late lines group among themselves within their
 * page and close with it ({@link endPage}).
 */
export class MultilineGrouper {
  readonly #rule: MultilineRule | undefined;
  readonly #headsBlock: (text: string) => boolean;
  readonly #maxLines: number;
  readonly #maxBytes: number;
  readonly #maxGapNs: bigint;
  readonly #streams = new Map<string, StreamState>();
  /** Groups of late lines in the page being pushed (closed by {@link endPage}). */
  readonly #late = new Map<string, StreamState>();

  constructor(options: MultilineOptions = {}) {
    this.#rule = options.rule === undefined || options.rule === 'python' ? undefined : options.rule;
    this.#headsBlock = options.headsBlock ?? defaultHeadsBlock;
    this.#maxLines = positiveInteger('maxLines', options.maxLines, 500);
    this.#maxBytes = positiveInteger('maxBytes', options.maxBytes, 256 * 1024);
    const gap = options.maxGapMs ?? 2000;
    if (!Number.isSafeInteger(gap) || gap < 0) throw new RangeError(`multiline maxGapMs must be a non-negative integer, got ${gap}`);
    this.#maxGapNs = BigInt(gap) * 1_000_000n;
  }

  /**
   * Takes the next line; returns the records it closed, and the line itself if it is a record
   * alone. A line older than the last one pushed on its stream (a late re-read) is grouped
   * with the other late lines of the same call only: see {@link endPage}.
   */
  push(line: ProcessLine): GroupedRecord[] {
    const state = this.#streams.get(line.stream);
    if (state === undefined) {
      const fresh: StreamState = { open: undefined, lastNs: line.timeNs };
      this.#streams.set(line.stream, fresh);
      return this.#start(fresh, line, undefined);
    }
    if (line.timeNs < state.lastNs) return this.#pushLate(line);
    return this.#pushInto(state, line);
  }

  /**
   * Takes the line of `stream` at `timeNs` with text `log` when it is a record alone that
   * leaves every group as it is (its stream has no open group, it is not late, and it opens
   * none): the same as {@link push} returning it alone, without building a group. Returns
   * false, taking nothing, otherwise. `log` undefined: the caller knows that the line opens
   * no block.
   */
  pushSingle(stream: string, timeNs: bigint, log: string | undefined): boolean {
    const state = this.#streams.get(stream);
    if (state !== undefined && (state.open !== undefined || timeNs < state.lastNs)) return false;
    if (log !== undefined && this.#opens(log) !== undefined) return false;
    if (state === undefined) this.#streams.set(stream, { open: undefined, lastNs: timeNs });
    else state.lastNs = timeNs;
    return true;
  }

  #opens(log: string): BlockPhase | undefined {
    return this.#rule === undefined ? pythonOpens(log, this.#headsBlock) : this.#rule.start.test(log) ? 'custom' : undefined;
  }

  /**
   * Ends a page: closes the groups of late lines. Lines that become visible late come
   * together (a whole traceback in one re-read), so they are grouped among themselves, but
   * never held past their page: they cannot join the groups of the lines already read.
   */
  endPage(): GroupedRecord[] {
    const out: GroupedRecord[] = [];
    for (const state of this.#late.values()) if (state.open !== undefined) out.push(this.#close(state, 'flush'));
    this.#late.clear();
    return out.sort(recordTimeOrder);
  }

  #pushLate(line: ProcessLine): GroupedRecord[] {
    const state = this.#late.get(line.stream);
    if (state === undefined) {
      const fresh: StreamState = { open: undefined, lastNs: line.timeNs };
      this.#late.set(line.stream, fresh);
      return this.#start(fresh, line, undefined);
    }
    if (line.timeNs < state.lastNs) return [this.#single(line)];
    return this.#pushInto(state, line);
  }

  #pushInto(state: StreamState, line: ProcessLine): GroupedRecord[] {
    state.lastNs = line.timeNs;
    const group = state.open;
    if (group === undefined) return this.#start(state, line, undefined);
    const out: GroupedRecord[] = [];
    if (this.#gapPassed(group, line.timeNs)) {
      out.push(this.#close(state, 'gap'));
      out.push(...this.#start(state, line, undefined));
      return out;
    }
    const next = this.#rule === undefined ? pythonContinues(group.phase, line.log) : this.#rule.continue.test(line.log) ? 'custom' : undefined;
    if (next === undefined) {
      out.push(this.#close(state, 'next_line'));
      out.push(...this.#start(state, line, undefined));
      return out;
    }
    const bytes = group.bytes + 1 + byteLength(line.log);
    if (group.lines.length + 1 > this.#maxLines || bytes > this.#maxBytes) {
      out.push(this.#close(state, group.lines.length + 1 > this.#maxLines ? 'max_lines' : 'max_bytes'));
      out.push(...this.#start(state, line, next));
      return out;
    }
    group.lines.push(line);
    group.phase = next;
    group.bytes = bytes;
    group.minSeq = Math.min(group.minSeq, line.seq);
    return out;
  }

  /** Closes, with `gap`, the open groups whose last line is more than the maximum gap older than `watermarkNs` (the model's checkpoint). */
  advance(watermarkNs: bigint): GroupedRecord[] {
    const out: GroupedRecord[] = [];
    for (const state of this.#streams.values()) {
      if (state.open !== undefined && this.#gapPassed(state.open, watermarkNs)) out.push(this.#close(state, 'gap'));
    }
    return out.sort(recordTimeOrder);
  }

  /** Closes every open group, with `flush` (the model stopped or was removed). */
  flush(): GroupedRecord[] {
    const out: GroupedRecord[] = [];
    for (const state of this.#streams.values()) if (state.open !== undefined) out.push(this.#close(state, 'flush'));
    return out.sort(recordTimeOrder);
  }

  /** The lowest seq of any line held in an open group: a sink's cursor may not pass it. Undefined when nothing is held. */
  openFirstSeq(): number | undefined {
    let min: number | undefined;
    for (const { open } of this.#streams.values()) if (open !== undefined && (min === undefined || open.minSeq < min)) min = open.minSeq;
    return min;
  }

  /** The open groups, to commit with a cursor and {@link restore} after a restart. */
  openGroups(): OpenGroupSnapshot[] {
    const out: OpenGroupSnapshot[] = [];
    for (const [stream, { open }] of this.#streams) if (open !== undefined) out.push({ stream, phase: open.phase, lines: open.lines });
    return out;
  }

  /**
   * Reopens a group saved by {@link openGroups} on a grouper that has none open on its
   * stream: it then goes on exactly as the grouper that held it. (Only the time of the last
   * line pushed on a stream without an open group is not kept: a late line on such a stream
   * right after a restart may open a group instead of being a record alone.)
   */
  restore(group: OpenGroupSnapshot): void {
    if (group.lines.length === 0) return;
    if (this.#streams.get(group.stream)?.open !== undefined) throw new Error(`bug: a group is already open on ${group.stream}`);
    let bytes = -1;
    let minSeq = Number.POSITIVE_INFINITY;
    let lastTimeNs = group.lines[0]!.timeNs;
    for (const line of group.lines) {
      bytes += 1 + byteLength(line.log);
      minSeq = Math.min(minSeq, line.seq);
      if (line.timeNs > lastTimeNs) lastTimeNs = line.timeNs;
    }
    this.#streams.set(group.stream, { open: { lines: [...group.lines], phase: group.phase, bytes, minSeq }, lastNs: lastTimeNs });
  }

  /** How many lines the open groups hold, and their UTF-8 bytes (each group's lines joined by `\n`). */
  held(): { lines: number; bytes: number } {
    let lines = 0;
    let bytes = 0;
    for (const { open } of this.#streams.values()) {
      if (open === undefined) continue;
      lines += open.lines.length;
      bytes += open.bytes;
    }
    return { lines, bytes };
  }

  #gapPassed(group: OpenGroup, timeNs: bigint): boolean {
    const last = group.lines[group.lines.length - 1]!;
    return last.timeNs < timeNs - this.#maxGapNs;
  }

  /** Opens a group with `line` in `phase` (or in the phase the line opens), or returns it as a record alone. */
  #start(state: StreamState, line: ProcessLine, phase: BlockPhase | undefined): GroupedRecord[] {
    const opened = phase ?? this.#opens(line.log);
    if (opened === undefined) return [this.#single(line)];
    state.open = { lines: [line], phase: opened, bytes: byteLength(line.log), minSeq: line.seq };
    return [];
  }

  #close(state: StreamState, closedBy: ClosedBy): GroupedRecord {
    const group = state.open!;
    state.open = undefined;
    const kind = group.phase === 'heading' ? 'single' : group.phase === 'custom' ? 'custom' : 'traceback';
    return groupedRecord(group.lines, kind, closedBy);
  }

  #single(line: ProcessLine): GroupedRecord {
    return groupedRecord([line], 'single', 'next_line');
  }
}
