//! Recent rates for `/status` and `mls top`: the daemon's counters (and the sinks' backlog)
//! sampled once a second, each rate taken over the last {@link RATE_WINDOW_SECONDS} seconds,
//! so that one look at `/status` shows what is happening now. Only series that moved within
//! the window keep samples: with thousands of quiet models, a quiet one costs one number.
import type { Metrics } from '../telemetry/metrics.js';

/** The span the rates are taken over. */
export const RATE_WINDOW_SECONDS = 10;

const SLOTS = RATE_WINDOW_SECONDS + 1;

/** The series sampled: what each rate is of, and the label it is per. */
function sources(m: Metrics) {
  return {
    entries: { metrics: [m.entriesNew], label: 'model' },
    // Each page is one answered request; a retried or failed one is counted by these two.
    requests: { metrics: [m.pages, m.apiRetries, m.pollErrors], label: 'model' },
    records: { metrics: [m.sinkRecords], label: 'sink' },
    backlog: { metrics: [m.backlogEntries], label: 'sink' },
  } as const;
}

/** What a rate is of. */
export type RateKind = keyof ReturnType<typeof sources>;

/** The last window of samples of every series. */
export class RecentRates {
  /** Per series: its value at each of the last {@link SLOTS} samples (a ring), while it moves. */
  readonly #moving = new Map<string, Float64Array>();
  #last = new Map<string, number>();
  readonly #times = new Float64Array(SLOTS);
  #samples = 0;

  constructor(private readonly metrics: Metrics) {}

  /** Takes one sample of every series at `nowMs` (called once a second). */
  async sample(nowMs: number): Promise<void> {
    const totals = new Map<string, number>();
    for (const [kind, source] of Object.entries(sources(this.metrics))) {
      for (const metric of source.metrics) {
        for (const { value, labels } of (await metric.get()).values) {
          const key = `${kind}\u0000${String((labels as Record<string, unknown>)[source.label])}`;
          totals.set(key, (totals.get(key) ?? 0) + value);
        }
      }
    }
    const slot = this.#samples % SLOTS;
    this.#times[slot] = nowMs;
    this.#samples++;
    const previous = this.#last;
    this.#last = totals;
    for (const key of this.#moving.keys()) if (!totals.has(key)) this.#moving.delete(key);
    for (const [key, value] of totals) {
      // A series that appears after the first sample is new: it started at 0.
      const last = previous.get(key) ?? (this.#samples > 1 ? 0 : value);
      let ring = this.#moving.get(key);
      if (ring === undefined) {
        if (last === value) continue;
        ring = new Float64Array(SLOTS).fill(last);
        this.#moving.set(key, ring);
      }
      ring[slot] = value;
      // Still for a whole window: its rate is 0 without samples.
      if (ring.every((v) => v === value)) this.#moving.delete(key);
    }
  }

  /** Per second over the window (0 for a series that did not move, and before two samples). */
  perSecond(kind: RateKind, name: string): number {
    const newest = (this.#samples - 1) % SLOTS;
    const oldest = this.#samples < SLOTS ? 0 : this.#samples % SLOTS;
    const ring = this.#moving.get(`${kind}\u0000${name}`);
    const seconds = (this.#times[newest]! - this.#times[oldest]!) / 1000;
    if (ring === undefined || seconds <= 0) return 0;
    return (ring[newest]! - ring[oldest]!) / seconds;
  }
}
