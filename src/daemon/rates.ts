//! Recent rates for `/status` and `mls top`: the daemon's counters (and the sinks' backlog)
//! sampled once a second, each rate taken over the last {@link RATE_WINDOW_SECONDS} seconds,
//! so that one look at `/status` shows what is happening now. Only series that moved within
//! the window have changes kept: with thousands of models, a series costs one lookup a
//! second, and a sample allocates nothing per series (samples that did kept the collector
//! busy at many models).
import type { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../telemetry/metrics.js';

/** The span the rates are taken over. */
export const RATE_WINDOW_SECONDS = 10;

const SLOTS = RATE_WINDOW_SECONDS + 1;

/** What a rate is of. */
export type RateKind = 'entries' | 'requests' | 'records' | 'backlog';

/** A series sampled: the metric, the label a rate is per, and whether a name has several series (other labels) to add up. */
interface Source {
  kind: RateKind;
  metric: Counter<string> | Gauge<string>;
  label: string;
  summed?: boolean;
  /** The metric's value per name at the last sample. */
  last: Map<string, number>;
}

/** The series sampled. */
function sources(m: Metrics): Source[] {
  const source = (kind: RateKind, metric: Counter<string> | Gauge<string>, label: string, summed = false): Source => ({ kind, metric, label, summed, last: new Map() });
  return [
    source('entries', m.entriesNew, 'model'),
    // Each page is one answered request; a retried or failed one is counted by these two.
    source('requests', m.pages, 'model'),
    source('requests', m.apiRetries, 'model'),
    source('requests', m.pollErrors, 'model', true),
    source('records', m.sinkRecords, 'sink'),
    source('backlog', m.backlogEntries, 'sink'),
  ];
}

/**
 * The changes of the series of one kind in the last {@link SLOTS} samples, in flat arrays
 * (one row of slots per name): a slot holds a change only if it was written in the window,
 * which its stamp (the sample's number) says, so nothing is cleared or allocated per sample.
 */
class Changes {
  readonly #rows = new Map<string, number>();
  #changes = new Float64Array(64 * SLOTS);
  #stamps = new Float64Array(64 * SLOTS).fill(-1);

  /** Adds `change` to `name`'s slot for sample `sample`. */
  add(name: string, sample: number, change: number): void {
    let row = this.#rows.get(name);
    if (row === undefined) {
      row = this.#rows.size;
      this.#rows.set(name, row);
      if ((row + 1) * SLOTS > this.#changes.length) this.#grow();
    }
    const k = row * SLOTS + (sample % SLOTS);
    if (this.#stamps[k] !== sample) {
      this.#stamps[k] = sample;
      this.#changes[k] = 0;
    }
    this.#changes[k]! += change;
  }

  /** The sum of `name`'s changes in samples [from, to]. */
  sum(name: string, from: number, to: number): number {
    const row = this.#rows.get(name);
    if (row === undefined) return 0;
    let total = 0;
    for (let k = row * SLOTS; k < (row + 1) * SLOTS; k++) {
      const stamp = this.#stamps[k]!;
      if (stamp >= from && stamp <= to) total += this.#changes[k]!;
    }
    return total;
  }

  /** Forgets `name`'s changes (its row is kept for a name that comes back). */
  forget(name: string): void {
    const row = this.#rows.get(name);
    if (row !== undefined) this.#stamps.fill(-1, row * SLOTS, (row + 1) * SLOTS);
  }

  #grow(): void {
    const changes = new Float64Array(this.#changes.length * 2);
    const stamps = new Float64Array(this.#stamps.length * 2).fill(-1);
    changes.set(this.#changes);
    stamps.set(this.#stamps);
    this.#changes = changes;
    this.#stamps = stamps;
  }
}

/** The last window of samples of every series. */
export class RecentRates {
  readonly #sources: Source[];
  readonly #changes = new Map<RateKind, Changes>();
  readonly #times = new Float64Array(SLOTS);
  #samples = 0;

  constructor(metrics: Metrics) {
    this.#sources = sources(metrics);
    for (const { kind } of this.#sources) if (!this.#changes.has(kind)) this.#changes.set(kind, new Changes());
  }

  /** Takes one sample of every series at `nowMs` (called once a second). */
  async sample(nowMs: number): Promise<void> {
    const sample = this.#samples;
    this.#times[sample % SLOTS] = nowMs;
    this.#samples++;
    for (const source of this.#sources) {
      const { values } = await source.metric.get();
      const changes = this.#changes.get(source.kind)!;
      let named: Map<string, number> | undefined;
      if (source.summed) {
        named = new Map();
        for (const { value, labels } of values) named.set(String(labels[source.label]), (named.get(String(labels[source.label])) ?? 0) + value);
      }
      const note = (name: string, value: number): void => {
        const last = source.last.get(name);
        if (last === value) return;
        source.last.set(name, value);
        // A series that appears after the first sample is new: it started at 0.
        const change = last === undefined ? (sample === 0 ? 0 : value) : value - last;
        if (change !== 0) changes.add(name, sample, change);
      };
      if (named) for (const [name, value] of named) note(name, value);
      else for (const { value, labels } of values) note(String(labels[source.label]), value);
      // A series that ended (a model removed by a reload) is forgotten: counted from 0 if it comes back.
      const seen = named ? named.size : values.length;
      if (source.last.size > seen) {
        const present = new Set(named ? named.keys() : values.map((v) => String(v.labels[source.label])));
        for (const name of source.last.keys()) {
          if (present.has(name)) continue;
          source.last.delete(name);
          changes.forget(name);
        }
      }
    }
  }

  /** Per second over the window (0 for a series that did not move, and before two samples). */
  perSecond(kind: RateKind, name: string): number {
    const newest = this.#samples - 1;
    const oldest = Math.max(0, this.#samples - SLOTS);
    const seconds = (this.#times[newest % SLOTS]! - this.#times[oldest % SLOTS]!) / 1000;
    if (newest < 0 || seconds <= 0) return 0;
    // The changes after the oldest sample add up to the newest value less the oldest.
    return (this.#changes.get(kind)?.sum(name, oldest + 1, newest) ?? 0) / seconds;
  }
}
