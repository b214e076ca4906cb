//! The daemon's own metrics (Prometheus, prefixed `mls_`). Labels are low-cardinality:
//! model id, sink name, status class, outcome.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Each configured model's lag in seconds, read when the metrics are scraped. */
export type LagSource = () => Iterable<readonly [model: string, seconds: number]>;

/** The series of one model that every poll writes, bound to its `model` label; the poller keeps them. */
export interface ModelCounters {
  polls: Counter.Internal;
  pages: Counter.Internal;
  entriesFetched: Counter.Internal;
  entriesNew: Counter.Internal;
  duplicates: Counter.Internal;
  /** Epoch seconds of the last window fetched to the end; not exported before the first. */
  lastSuccess: Gauge.Internal<'model'>;
  /** 1 while the model polls normally, 0 while paused by an error. */
  up: Gauge.Internal<'model'>;
}

/** Every metric the daemon exports. Create one per daemon; tests read them back. */
export class Metrics {
  readonly registry = new Registry();

  // per model: the series every poll writes, bound once per model (initModel)
  private readonly models = new Map<string, ModelCounters>();
  readonly polls = new Counter({ name: 'mls_polls_total', help: 'Windows fetched to the end, per model.', labelNames: ['model'], registers: [this.registry] });
  readonly pages = new Counter({ name: 'mls_pages_total', help: 'Pages of logs received, per model.', labelNames: ['model'], registers: [this.registry] });
  readonly entriesFetched = new Counter({ name: 'mls_entries_fetched_total', help: 'Log entries received from the service, per model (before dedupe).', labelNames: ['model'], registers: [this.registry] });
  readonly entriesNew = new Counter({ name: 'mls_entries_new_total', help: 'Entries appended to the journal after dedupe, per model.', labelNames: ['model'], registers: [this.registry] });
  readonly duplicates = new Counter({ name: 'mls_duplicates_dropped_total', help: 'Entries recognised as already delivered (window re-reads), per model.', labelNames: ['model'], registers: [this.registry] });
  readonly lastSuccess = new Gauge({ name: 'mls_model_last_success_timestamp_seconds', help: 'When a window of this model was last fetched to the end.', labelNames: ['model'], registers: [this.registry] });
  readonly modelUp = new Gauge({ name: 'mls_model_up', help: '1 while the model polls normally, 0 while it is paused by an error (e.g. the token was refused).', labelNames: ['model'], registers: [this.registry] });
  readonly entriesInvalid = new Counter({
    name: 'mls_entries_invalid_total',
    help: 'Off-spec entries shipped with their fields as text, each copy once however often it is read, per model and reason (not_an_object, time_unparsable, stream_not_string, log_not_string).',
    labelNames: ['model', 'reason'],
    registers: [this.registry],
  });
  readonly tokenRestarts = new Counter({ name: 'mls_window_restarts_total', help: 'Window fetches restarted from the beginning because the service rejected next_token, per model.', labelNames: ['model'], registers: [this.registry] });
  readonly tokenLoops = new Counter({ name: 'mls_token_repeats_total', help: 'Pages whose next_token repeated the token just sent (treated as the end), per model.', labelNames: ['model'], registers: [this.registry] });
  readonly tokenCycles = new Counter({ name: 'mls_token_cycles_total', help: 'Window fetches ended because a page\'s next_token had already been followed in the window (a token cycle of any length), per model.', labelNames: ['model'], registers: [this.registry] });
  readonly windowSplits = new Counter({ name: 'mls_window_splits_total', help: 'Window fetches cut to a shorter window and started again, per model and reason (max_pages, max_duration, too_large).', labelNames: ['model', 'reason'], registers: [this.registry] });
  /** Not per model (the log line and `mls status` name the model): exported at 0 from the start, so `increase()` sees the first. */
  readonly windowsAbandoned = new Counter({ name: 'mls_windows_abandoned_total', help: 'Windows of the shortest span (1 s) that still reached a window limit and were completed as read, per reason (max_pages, max_duration).', labelNames: ['reason'], registers: [this.registry] });
  readonly pollErrors = new Counter({ name: 'mls_poll_errors_total', help: 'Failed page fetches after the client gave up retrying, per model and error code.', labelNames: ['model', 'code'], registers: [this.registry] });
  /** Computed at each scrape from {@link Metrics.setLagSource}: it keeps growing while a model is stuck, paused or blocked. */
  readonly lag = new Gauge({
    name: 'mls_model_lag_seconds',
    help: 'Now minus the watermark (end of the last completed window; the start before the first), per configured model, computed at scrape time.',
    labelNames: ['model'],
    registers: [this.registry],
    collect: () => this.collectLag(),
  });
  private lagSource: LagSource | undefined;
  readonly ingestDelay = new Histogram({
    name: 'mls_ingest_delay_seconds',
    help: 'Entries found by a read that an earlier read of their span did not return, per model, by how long after the entry\'s own time that earlier read was: a lower bound of how late the service made them visible.',
    labelNames: ['model'],
    buckets: [0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly settle = new Gauge({ name: 'mls_poll_settle_seconds', help: 'The settle a model\'s windows end with now (learned per model with settle: auto).', labelNames: ['model'], registers: [this.registry] });
  readonly firstRereadAge = new Gauge({ name: 'mls_poll_first_reread_age_seconds', help: 'The age at which a model\'s spans are first read again now (learned per model with settle: auto; the first of poll.reread.ages otherwise).', labelNames: ['model'], registers: [this.registry] });
  readonly budgetUtilization = new Gauge({
    name: 'mls_poll_budget_utilization',
    help: 'The request budget (poll.rate_limit, and poll.concurrency over the request latency): kind="required" is the share that polling every model once per poll.interval takes (above 1 the budget cannot cover it), kind="used" the share used over the last interval.',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly activeModels = new Gauge({ name: 'mls_poll_active_models', help: 'Models polled more often than poll.interval now: their last poll returned new entries, or they were asked to hurry.', registers: [this.registry] });
  readonly apiRetries = new Counter({ name: 'mls_api_retries_total', help: 'Requests to the service retried by the client, per model.', labelNames: ['model'], registers: [this.registry] });
  readonly apiRequests = new Counter({ name: 'mls_api_requests_total', help: 'HTTP requests to the service, per operation and status class (2xx, 4xx, 5xx, error).', labelNames: ['operation', 'status_class'], registers: [this.registry] });
  readonly apiLatency = new Histogram({
    name: 'mls_api_request_duration_seconds',
    help: 'Latency of requests to the service.',
    labelNames: ['operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  // journal
  readonly journalEntries = new Gauge({ name: 'mls_journal_entries', help: 'Entries held in the journal.', registers: [this.registry] });
  readonly journalBytes = new Gauge({ name: 'mls_journal_bytes', help: 'Approximate bytes held in the journal.', registers: [this.registry] });
  readonly journalFull = new Gauge({ name: 'mls_journal_full', help: '1 while the journal is at its bounds (polling paused with when_full: block).', registers: [this.registry] });

  // per sink
  readonly delivered = new Counter({ name: 'mls_sink_delivered_total', help: 'Entries acknowledged by the sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly sinkRecords = new Counter({ name: 'mls_sink_records_total', help: 'Records handed to the sink (entries, for a sink shipping them raw), counted once per batch: a retry is not counted again.', labelNames: ['sink'], registers: [this.registry] });
  readonly batches = new Counter({ name: 'mls_sink_batches_total', help: 'Batches sent, per sink and outcome (ok, retry, reject).', labelNames: ['sink', 'outcome'], registers: [this.registry] });
  readonly sinkRetries = new Counter({ name: 'mls_sink_retries_total', help: 'Batch sends retried, per sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly sinkFailures = new Counter({ name: 'mls_sink_failures_total', help: 'Failed batch sends (retryable or not), per sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly sinkErrors = new Counter({ name: 'mls_sink_errors_total', help: 'Faults of a sink or of its delivery loop: a send that threw, returned a malformed outcome or did not finish within its timeout, or a loop that failed and started again, per sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly deadLetters = new Counter({ name: 'mls_sink_dead_letters_total', help: 'Entries moved to the dead-letter table, per sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly fileUnknownBytes = new Counter({ name: 'mls_file_sink_unknown_bytes_total', help: 'Bytes a file sink found in its output files that its committed state has no offset for (written before its state began: under an earlier state file, or by something else); appended after, never cut.', labelNames: ['sink'], registers: [this.registry] });
  readonly dropped = new Counter({ name: 'mls_sink_dropped_total', help: 'Entries dropped before delivery because the journal was full (when_full: drop_oldest), per sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly backlogEntries = new Gauge({ name: 'mls_sink_backlog_entries', help: 'Entries in the journal not yet acknowledged by the sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly backlogBytes = new Gauge({ name: 'mls_sink_backlog_bytes', help: 'Approximate bytes not yet acknowledged by the sink.', labelNames: ['sink'], registers: [this.registry] });
  readonly processingDropped = new Counter({ name: 'mls_processing_dropped_total', help: 'Records a sink\'s processing filter dropped (drop rules, min_level), per sink and model.', labelNames: ['sink', 'model'], registers: [this.registry] });
  readonly modelRecords = new Counter({
    name: 'mls_model_log_records_total',
    help: 'Log records made by processing, per model and detected level (unknown: none in the text); each record is counted once, whichever sinks get it, before any sink\'s filter.',
    labelNames: ['model', 'level'],
    registers: [this.registry],
  });
  readonly modelExceptions = new Counter({
    name: 'mls_model_exceptions_total',
    help: 'Records showing a Python exception, per model and exception type as printed (at most processing.exceptions.max_types_per_model types per model, the first met; the rest as other); counted once, like mls_model_log_records_total.',
    labelNames: ['model', 'type'],
    registers: [this.registry],
  });
  readonly heldLines = new Gauge({ name: 'mls_processing_held_lines', help: 'Lines held in open multiline groups, per sink (the journal keeps them until their record is acknowledged).', labelNames: ['sink'], registers: [this.registry] });
  readonly deliveryLatency = new Histogram({ name: 'mls_sink_delivery_latency_seconds', help: 'Time from fetching an entry to its acknowledgement by the sink (per batch, oldest entry).', labelNames: ['sink'], buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900], registers: [this.registry] });
  readonly sendDuration = new Histogram({ name: 'mls_sink_send_duration_seconds', help: 'Duration of one batch send.', labelNames: ['sink'], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30], registers: [this.registry] });

  constructor(options: { processMetrics?: boolean } = {}) {
    // The event-loop delay monitor samples on a timer: every second instead of prom-client's
    // 10 ms keeps an idle daemon from waking 100 times a second just to measure itself
    // (stalls of a second or more, the ones that matter here, are still caught).
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'mls_', eventLoopMonitoringPrecision: 1_000 });
    for (const reason of ['max_pages', 'max_duration']) this.windowsAbandoned.inc({ reason }, 0);
  }

  /**
   * A model's series, created (and exported at 0, `mls_model_up` at 1) at its first call:
   * the poller keeps them. Rare events (`mls_window_restarts_total`, `mls_poll_errors_total`,
   * …) get a model's series at its first event instead.
   */
  initModel(model: string): ModelCounters {
    let s = this.models.get(model);
    if (s) return s;
    const labels = { model };
    s = {
      polls: this.polls.labels(labels),
      pages: this.pages.labels(labels),
      entriesFetched: this.entriesFetched.labels(labels),
      entriesNew: this.entriesNew.labels(labels),
      duplicates: this.duplicates.labels(labels),
      lastSuccess: this.lastSuccess.labels(labels),
      up: this.modelUp.labels(labels),
    };
    for (const c of [s.polls, s.pages, s.entriesFetched, s.entriesNew, s.duplicates]) c.inc(0);
    s.up.set(1);
    this.models.set(model, s);
    return s;
  }

  /**
   * Models no longer configured (their pollers stopped): every series labelled with one of
   * them ends, in every metric (records by level, exceptions by type, errors by code…), so
   * that a reload that drops models leaves no series behind. One pass for all of them.
   */
  async removeModels(models: Iterable<string>): Promise<void> {
    const gone = new Set(models);
    if (gone.size === 0) return;
    for (const model of gone) this.models.delete(model);
    for (const { name } of this.registry.getMetricsAsArray()) {
      const metric = this.registry.getSingleMetric(name);
      if (metric === undefined) continue;
      for (const { labels } of (await metric.get()).values) {
        if (typeof labels.model !== 'string' || !gone.has(labels.model)) continue;
        // A histogram's bucket series carry `le` besides the labels the histogram was given.
        const { le: _le, ...own } = labels;
        metric.remove(own);
      }
    }
  }

  /** One HTTP attempt to the service: its status (or `error`: no response) and how long it took. */
  apiAttempt(operation: string, status: number | 'error', latencyMs: number): void {
    this.apiRequests.inc({ operation, status_class: status === 'error' ? 'error' : `${Math.floor(status / 100)}xx` });
    // prom-client refuses a value that is not a finite number; a request is counted all the same.
    if (Number.isFinite(latencyMs)) this.apiLatency.observe({ operation }, latencyMs / 1000);
  }

  /** Exports a sink's series at 0 from the start. */
  initSink(sink: string): void {
    for (const c of [this.delivered, this.sinkRecords, this.sinkRetries, this.sinkFailures, this.sinkErrors, this.deadLetters, this.dropped]) c.inc({ sink }, 0);
    this.backlogEntries.set({ sink }, 0);
    this.backlogBytes.set({ sink }, 0);
  }

  /** Where the lag gauge reads each configured model's lag at scrape time; `undefined` leaves the gauge as it stands. */
  setLagSource(source: LagSource | undefined): void {
    this.lagSource = source;
  }

  private collectLag(): void {
    const source = this.lagSource;
    if (!source) return;
    // Rebuilt at every scrape: a model no longer configured loses its series.
    this.lag.reset();
    for (const [model, seconds] of source()) this.lag.set({ model }, seconds);
  }

  /** The content type of {@link Metrics.text}. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Prometheus text exposition. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
