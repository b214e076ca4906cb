//! Recent rates for `/status` and `mls top`: the daemon's counters (and the sinks' backlog)
//! sampled once a second, each rate taken over the last {@link RATE_WINDOW_SECONDS} seconds,
//! so that one look at `/status` shows what is happening now. Only series that moved within
//! the window keep samples: with thousands of quiet models, a quiet one costs one lookup a
//! second and allocates nothing (samples that allocated per series every second kept the
//! collector busy at many models).
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

/** The last window of samples of every series. */
export class RecentRates {
  readonly #sources: Source[];
  /** Per kind, by name, while it moves: the change at each of the last {@link SLOTS} samples (a ring). */
  readonly #moving = new Map<RateKind, Map<string, Float64Array>>();
  readonly #times = new Float64Array(SLOTS);
  #samples = 0;

  constructor(metrics: Metrics) {
    this.#sources = sources(metrics);
  }

  /** Takes one sample of every series at `nowMs` (called once a second). */
  async sample(nowMs: number): Promise<void> {
    const slot = this.#samples % SLOTS;
    this.#times[slot] = nowMs;
    const first = this.#samples === 0;
    this.#samples++;
    // The slot taken again held the oldest change, now out of the window.
    for (const rings of this.#moving.values()) for (const ring of rings.values()) ring[slot] = 0;
    for (const source of this.#sources) {
      const { values } = await source.metric.get();
      let named: Iterable<[string, number]> | undefined;
      if (source.summed) {
        const sums = new Map<string, number>();
        for (const { value, labels } of values) sums.set(String(labels[source.label]), (sums.get(String(labels[source.label])) ?? 0) + value);
        named = sums;
      }
      let seen = 0;
      const note = (name: string, value: number): void => {
        seen++;
        const last = source.last.get(name);
        if (last === value) return;
        source.last.set(name, value);
        // A series that appears after the first sample is new: it started at 0.
        const change = last === undefined ? (first ? 0 : value) : value - last;
        if (change !== 0) this.#ring(source.kind, name)[slot]! += change;
      };
      if (named) for (const [name, value] of named) note(name, value);
      else for (const { value, labels } of values) note(String(labels[source.label]), value);
      // A series that ended (a model removed by a reload) is forgotten: counted from 0 if it comes back.
      if (source.last.size > seen) this.#forget(source, new Set(named ? [...named].map(([n]) => n) : values.map((v) => String(v.labels[source.label]))));
    }
    for (const rings of this.#moving.values()) for (const [name, ring] of rings) if (ring.every((v) => v === 0)) rings.delete(name);
  }

  /** The ring of changes of `name`, made on its first change. */
  #ring(kind: RateKind, name: string): Float64Array {
    let rings = this.#moving.get(kind);
    if (rings === undefined) this.#moving.set(kind, (rings = new Map()));
    let ring = rings.get(name);
    if (ring === undefined) rings.set(name, (ring = new Float64Array(SLOTS)));
    return ring;
  }

  #forget(source: Source, present: ReadonlySet<string>): void {
    for (const name of source.last.keys()) {
      if (present.has(name)) continue;
      source.last.delete(name);
      this.#moving.get(source.kind)?.delete(name);
    }
  }

  /** Per second over the window (0 for a series that did not move, and before two samples). */
  perSecond(kind: RateKind, name: string): number {
    const newest = (this.#samples - 1) % SLOTS;
    const oldest = this.#samples < SLOTS ? 0 : this.#samples % SLOTS;
    const ring = this.#moving.get(kind)?.get(name);
    const seconds = (this.#times[newest]! - this.#times[oldest]!) / 1000;
    if (ring === undefined || seconds <= 0) return 0;
    // The changes after the oldest sample add up to the newest value less the oldest.
    let change = 0;
    for (let i = 0; i < SLOTS; i++) if (i !== oldest) change += ring[i]!;
    return change / seconds;
  }
}
