//! The per-model series that every poll touches (`mls_polls_total`, `mls_pages_total`, the
//! entry counters, `mls_model_last_success_timestamp_seconds`, `mls_model_up`), kept as plain
//! numbers on one object per model and turned into series only when scraped. prom-client keeps
//! two or three objects and a label hash per series, and hashes the labels at every `inc`:
//! with 10,000 models that was about 20 MB of live heap and several hashes per request.

/** One model's counters and gauges; the poller holds it and writes its fields directly. */
export class ModelCounters {
  polls = 0;
  pages = 0;
  entriesFetched = 0;
  entriesNew = 0;
  duplicates = 0;
  /** Epoch seconds of the last window fetched to the end; not exported before the first. */
  lastSuccessSeconds: number | undefined = undefined;
  /** 1 while the model polls normally, 0 while paused by an error. */
  up = 1;
}

type Field = keyof ModelCounters;

/** One metric read from the {@link ModelCounters} of every model at scrape time (prom-client's metric interface). */
export class ModelCountersMetric {
  readonly labelNames = ['model'] as const;
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
    private readonly field: Field,
    private readonly models: ReadonlyMap<string, ModelCounters>,
  ) {}

  /** The series, one per model (a gauge without a value yet has none). */
  get(): { name: string; help: string; type: string; aggregator: string; values: Array<{ labels: { model: string }; value: number }> } {
    const values: Array<{ labels: { model: string }; value: number }> = [];
    for (const [model, c] of this.models) {
      const value = c[this.field];
      if (value !== undefined) values.push({ labels: { model }, value });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Part of prom-client's metric interface (`Registry.resetMetrics`): counters restart at 0. */
  reset(): void {
    for (const c of this.models.values()) {
      if (this.field === 'lastSuccessSeconds') c.lastSuccessSeconds = undefined;
      else if (this.field !== 'up') c[this.field] = 0;
    }
  }
}
