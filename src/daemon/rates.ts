//! Recent rates for `/status` and `mls top`: the daemon's counters (and the sinks' backlog)
//! sampled once a second, each rate taken over the last {@link RATE_WINDOW_SECONDS} seconds,
//! so that one look at `/status` shows what is happening now. Only series that moved within
//! the window keep samples: with thousands of quiet models, a quiet one costs one number.
import type { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../telemetry/metrics.js';

/** The span the rates are taken over. */
export const RATE_WINDOW_SECONDS = 10;

const SLOTS = RATE_WINDOW_SECONDS + 1;

/** What a rate is of. */
export type RateKind = 'entries' | 'requests' | 'records' | 'backlog';

/** The series sampled: what each rate is of, and the label it is per. */
function sources(m: Metrics): Record<RateKind, { metrics: ReadonlyArray<Counter<string> | Gauge<string>>; label: string }> {
  return {
    entries: { metrics: [m.entriesNew], label: 'model' },
    // Each page is one answered request; a retried or failed one is counted by these two.
    requests: { metrics: [m.pages, m.apiRetries, m.pollErrors], label: 'model' },
    records: { metrics: [m.sinkRecords], label: 'sink' },
    backlog: { metrics: [m.backlogEntries], label: 'sink' },
  };
}

/** The last window of samples of every series. */
export class RecentRates {
  /** Per kind, by name: each series' value at the last sample, and its values at the last {@link SLOTS} samples (a ring) while it moves. */
  readonly #series = new Map<RateKind, { last: Map<string, number>; moving: Map<string, Float64Array> }>();
  readonly #times = new Float64Array(SLOTS);
  #samples = 0;

  constructor(private readonly metrics: Metrics) {}

  /** Takes one sample of every series at `nowMs` (called once a second). */
  async sample(nowMs: number): Promise<void> {
    const slot = this.#samples % SLOTS;
    this.#times[slot] = nowMs;
    this.#samples++;
    for (const [kind, source] of Object.entries(sources(this.metrics)) as Array<[RateKind, ReturnType<typeof sources>[RateKind]]>) {
      const totals = new Map<string, number>();
      for (const metric of source.metrics) {
        for (const { value, labels } of (await metric.get()).values) {
          const name = String(labels[source.label]);
          totals.set(name, (totals.get(name) ?? 0) + value);
        }
      }
      const series = this.#series.get(kind) ?? { last: new Map<string, number>(), moving: new Map<string, Float64Array>() };
      this.#series.set(kind, { last: totals, moving: series.moving });
      for (const name of series.moving.keys()) if (!totals.has(name)) series.moving.delete(name);
      for (const [name, value] of totals) {
        // A series that appears after the first sample is new: it started at 0.
        const last = series.last.get(name) ?? (this.#samples > 1 ? 0 : value);
        let ring = series.moving.get(name);
        if (ring === undefined) {
          if (last === value) continue;
          ring = new Float64Array(SLOTS).fill(last);
          series.moving.set(name, ring);
        }
        ring[slot] = value;
        // Still for a whole window: its rate is 0 without samples.
        if (ring.every((v) => v === value)) series.moving.delete(name);
      }
    }
  }

  /** Per second over the window (0 for a series that did not move, and before two samples). */
  perSecond(kind: RateKind, name: string): number {
    const newest = (this.#samples - 1) % SLOTS;
    const oldest = this.#samples < SLOTS ? 0 : this.#samples % SLOTS;
    const ring = this.#series.get(kind)?.moving.get(name);
    const seconds = (this.#times[newest]! - this.#times[oldest]!) / 1000;
    if (ring === undefined || seconds <= 0) return 0;
    return (ring[newest]! - ring[oldest]!) / seconds;
  }
}
