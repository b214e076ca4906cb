//! Assembles and runs the pipeline: api client → model pollers (windows, checkpoints,
//! dedupe) → journal → per-sink delivery loops → sinks. Owns start-up order, backpressure,
//! journal trimming and the shutdown sequence.
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Config, SinkConfig } from './config/index.js';
import { createApiClient } from './api/client.js';
import type { BodyPool } from './api/body-pool.js';
import type { ApiClient } from './api/types.js';
import { StateStore, type WalSync } from './journal/store.js';
import { acquireStateLock, type StateLock } from './journal/lock.js';
import { GroupCommit } from './journal/group-commit.js';
import { TickTimer, pollGridMs } from './poller/tick-timer.js';
import { ModelPoller } from './poller/model-poller.js';
import { FairSchedule } from './poller/fair-schedule.js';
import type { AbandonedWindow } from './poller/window-events.js';
import { sleep } from './time/backoff.js';
import { lagSeconds, modelLags } from './poller/lag.js';
import { logStartAtChanges, startAtChanges } from './poller/start-at.js';
import { SinkDelivery } from './delivery/sink-delivery.js';
import { retireSink, sinkBoundMs } from './delivery/retire.js';
import { buildSink } from './sinks/registry.js';
import type { Sink } from './sinks/contract.js';
import { Metrics, statusClass } from './telemetry/metrics.js';
import { registerSecret } from './telemetry/logger.js';
import { steadyClock, type Clock } from './time/clock.js';
import { HeapGrowth } from './runtime/heap-growth.js';
import { describeError } from './errors.js';

/** Options of {@link Daemon.start}. */
export interface DaemonOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  metrics?: Metrics;
  /**
   * Called when the daemon cannot go on: the state file could not be synced to disk, so
   * nothing more can be committed. `mls run` exits; a supervisor's restart recovers from
   * the file. Without it the pollers stop and the sinks deliver what is durable.
   */
  onFatal?: (err: unknown) => void;
  /** How the state file's WAL is synced (default: `fdatasync`; tests make it fail). */
  walSync?: WalSync;
  /** Where response bodies are collected (default: the client's own pool; tests watch it). */
  bodies?: BodyPool;
  /** Least time between two prunings of a model's dedupe keys (default a minute; tests shorten it). */
  pruneEveryMs?: number;
}

/** What the window limits did to a model since the daemon started. */
export interface ModelWindowEvents {
  /** Window fetches cut short and started again on a shorter window. */
  splits: number;
  /** The last windows completed as read although a cap stopped their fetch, oldest first. */
  abandoned: readonly AbandonedWindow[];
}

/** A snapshot of what the daemon is doing, for `/status` and `mls status`. */
export interface DaemonStatus {
  /** The state file's installation id (part of every batch id); undefined for a file no version with ids has opened. */
  installationId: string | undefined;
  models: Array<{
    id: string;
    startMs: number;
    watermarkMs: number | undefined;
    lagSeconds: number;
    window: { fromMs: number; toMs: number; hasToken: boolean } | undefined;
    lastError: string | undefined;
    /** Only from a running daemon. */
    windowSplits?: number;
    /** Only from a running daemon. */
    abandonedWindows?: readonly AbandonedWindow[];
  }>;
  sinks: Array<{ name: string; type: string; cursor: number; backlogEntries: number; delivered: number; dropped: number; deadLetters: number; lastError: string | undefined; failingSeconds: number | undefined }>;
  journal: { entries: number; bytes: number; lastSeq: number };
}

interface RunningSink {
  config: SinkConfig;
  sink: Sink;
  delivery: SinkDelivery;
}

/** The running daemon. */
export class Daemon {
  readonly metrics: Metrics;
  private readonly pollers = new Map<string, ModelPoller>();
  private readonly sinks = new Map<string, RunningSink>();
  private readonly queue: PQueue;
  /** Per-model priorities in `queue`, so that no model starves the others. */
  private readonly fair: FairSchedule;
  /** Interval sleeps of all pollers, woken in groups (see tick-timer.ts). */
  private readonly pollTimer: TickTimer;
  private readonly groupCommit: GroupCommit;
  private readonly heapGrowth: HeapGrowth;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly gaugeTimer: NodeJS.Timeout;
  private lastTrimMs = 0;
  private lastTickMs = Date.now();
  private fullSince: number | undefined;
  private readonly droppedSinceLog = new Map<string, number>();
  private lastDropLogMs = Number.NEGATIVE_INFINITY;
  private stopPromise: Promise<void> | undefined;
  private readonly roomWaiters = new Set<() => void>();

  private constructor(
    private config: Config,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly store: StateStore,
    private readonly lock: StateLock,
    private readonly client: ApiClient,
    metrics: Metrics,
    private readonly onFatal: ((err: unknown) => void) | undefined,
    private readonly pruneEveryMs: number | undefined,
  ) {
    this.metrics = metrics;
    const rate = config.poll.rate_limit;
    this.queue = new PQueue({
      concurrency: config.poll.concurrency,
      ...(rate ? { intervalCap: rate.count, interval: rate.perMs } : {}),
    });
    this.fair = new FairSchedule(this.queue, config.poll.interval);
    this.pollTimer = new TickTimer(pollGridMs(config.poll.interval));
    this.groupCommit = new GroupCommit(store, {
      onDurable: () => {
        for (const s of this.sinks.values()) s.delivery.notify();
      },
      onSyncFailure: (err) => this.onSyncFailure(err),
    });
    this.heapGrowth = new HeapGrowth({
      onSwitch: (busy, flag) => logger.debug({ flag }, busy ? 'entries arrive fast: the heap may grow more between full collections' : 'entries slowed down: V8 sizes the heap itself again'),
    });
    this.keepAlive = setInterval(() => {}, 1 << 30);
    this.gaugeTimer = setInterval(() => this.updateGauges(), 1000);
    this.gaugeTimer.unref();
    metrics.setLagSource(() => modelLags(this.store, this.config.models, this.clock.now()));
  }

  /** Validated config in, running daemon out. Takes the state lock first. */
  static async start(options: DaemonOptions): Promise<Daemon> {
    const { config, logger } = options;
    const metrics = options.metrics ?? new Metrics();
    const clock =
      options.clock ??
      steadyClock({ onStep: (delta) => logger.warn({ deltaMs: Math.round(delta) }, 'the wall clock stepped; windows keep following the monotonic clock until restart') });
    registerSecret(config.api.token);
    const lock = acquireStateLock(config.state.path);
    let store: StateStore | undefined;
    try {
      store = StateStore.open(config.state.path, { now: () => clock.now(), walSync: options.walSync });
      const client = createApiClient({
        baseUrl: config.api.base_url,
        token: config.api.token,
        authScheme: config.api.auth_scheme,
        timeouts: { connectMs: config.api.timeouts.connect, headersMs: config.api.timeouts.headers, bodyMs: config.api.timeouts.body },
        retry: { deadlineMs: config.api.retry.deadline, baseDelayMs: config.api.retry.base_delay, maxDelayMs: config.api.retry.max_delay },
        maxResponseBytes: config.api.max_response_bytes,
        caFile: config.api.ca_file,
        insecureSkipVerify: config.api.insecure_skip_verify,
        connections: config.poll.concurrency,
        bodies: options.bodies,
        logger: logger.child({ component: 'api' }),
        observer: {
          onAttempt: (a) => {
            metrics.apiRequests.inc({ model: a.modelId, operation: a.operation, status_class: statusClass(a.status) });
            metrics.apiLatency.observe({ operation: a.operation }, a.latencyMs / 1000);
          },
          onRetry: (r) => metrics.apiRetries.inc({ model: r.modelId }),
          onPage: (p) => metrics.pagesParsed.inc({ path: p.path }),
        },
      });
      const daemon = new Daemon(config, logger, clock, store, lock, client, metrics, options.onFatal, options.pruneEveryMs);
      await daemon.startSinks(config.sinks);
      daemon.startPollers(config);
      daemon.updateGauges();
      logger.info({ models: config.models.length, sinks: config.sinks.map((s) => s.name), state: config.state.path }, 'mls daemon started');
      return daemon;
    } catch (err) {
      store?.close();
      lock.release();
      throw err;
    }
  }

  private async startSinks(configs: readonly SinkConfig[]): Promise<void> {
    const removed = this.store.removeSinksExcept(configs.map((s) => s.name));
    if (removed.length > 0) this.logger.warn({ sinks: removed }, 'forgot the cursors of sinks no longer configured');
    for (const sc of configs) await this.startSink(sc);
  }

  private async startSink(sc: SinkConfig): Promise<void> {
    const row = this.store.ensureSink(sc.name);
    this.metrics.initSink(sc.name);
    const log = this.logger.child({ component: 'sink', sink: sc.name });
    const sink = await buildSink(sc, {
      name: sc.name,
      state: row.state,
      now: () => this.clock.now(),
      logger: log,
      commitState: (state: string) => this.store.setSinkState(sc.name, state),
    }, { modelResources: new Map(this.config.models.map((m) => [m.id, m.resource])) });
    const delivery = new SinkDelivery({
      name: sc.name,
      sink,
      store: this.store,
      metrics: this.metrics,
      logger: log,
      now: () => this.clock.now(),
      onAck: () => this.afterAck(),
      settings: {
        maxEntries: sc.batch.max_entries,
        maxBytes: sc.batch.max_bytes,
        maxDelayMs: sc.batch.max_delay,
        retryBaseMs: sc.retry.base_delay,
        retryMaxMs: sc.retry.max_delay,
        models: sc.models ? new Set(sc.models) : undefined,
        concurrency: sc.type === 'webhook' ? sc.concurrency : 1,
        sendTimeoutMs: sc.type === 'module' ? sc.timeout : undefined,
      },
    });
    this.sinks.set(sc.name, { config: sc, sink, delivery });
    void delivery.start();
  }

  private startPollers(config: Config): void {
    // A changed start_at is said once (it moves no stored start), then recorded.
    const models = config.models.map((m) => ({ id: m.id, startAt: m.start_at ?? config.poll.start_at, checkpoint: this.store.getCheckpoint(m.id) }));
    logStartAtChanges(this.logger.child({ component: 'poller' }), startAtChanges(models, (id, setting) => this.store.recordStartAt(id, setting)));
    for (const m of config.models) {
      if (this.pollers.has(m.id)) continue;
      this.metrics.initModel(m.id);
      const logger = this.logger.child({ component: 'poller', model: m.id });
      const startAt = m.start_at ?? config.poll.start_at;
      const poller = new ModelPoller({
        modelId: m.id,
        settings: {
          intervalMs: config.poll.interval,
          jitter: config.poll.jitter,
          lookbackMs: config.poll.lookback,
          settleMs: config.poll.settle,
          maxWindowMs: config.poll.max_window,
          reread: config.poll.reread.mode === 'sparse' ? { mode: 'sparse', agesMs: config.poll.reread.ages } : { mode: 'sliding' },
          startAt,
          isLessLogs: m.is_less_logs,
          authRetryMs: config.poll.auth_retry,
          pruneEveryMs: this.pruneEveryMs,
          windowLimits: { maxPages: config.poll.window_limits.max_pages, maxDurationMs: config.poll.window_limits.max_duration },
        },
        store: this.store,
        client: this.client,
        schedule: <T>(fn: () => Promise<T>) => this.fair.add(m.id, fn),
        waitForRoom: (signal) => this.waitForRoom(signal),
        onAppend: () => {
          for (const s of this.sinks.values()) s.delivery.notify();
        },
        onWindowDone: () => {
          for (const s of this.sinks.values()) s.delivery.flushSoon();
        },
        clock: this.clock,
        logger,
        metrics: this.metrics,
        sleep: (ms, signal) => this.pollTimer.sleep(ms, signal),
        commit: (page) => {
          this.heapGrowth.noteEntries(page.entries.length);
          return this.groupCommit.commit(page);
        },
      });
      this.pollers.set(m.id, poller);
      void poller.start();
    }
  }

  private overBounds(): { entries: number; bytes: number } | undefined {
    const size = this.store.journalSize();
    const { max_entries, max_bytes } = this.config.buffer;
    if (size.entries < max_entries && size.bytes < max_bytes) return undefined;
    return { entries: Math.max(0, size.entries - max_entries), bytes: Math.max(0, size.bytes - max_bytes) };
  }

  /** Backpressure between pages: `block` waits for room, `drop_oldest` makes room. */
  private async waitForRoom(signal: AbortSignal): Promise<void> {
    for (;;) {
      const over = this.overBounds();
      if (!over) {
        if (this.fullSince !== undefined) {
          this.logger.info({ pausedMs: this.clock.now() - this.fullSince }, 'journal has room again; polling resumes');
          this.fullSince = undefined;
          this.metrics.journalFull.set(0);
        }
        return;
      }
      if (this.config.buffer.when_full === 'drop_oldest') {
        const slack = Math.ceil(this.config.buffer.max_entries * 0.05);
        const dropped = this.store.dropOldest(over.entries + slack, over.bytes);
        const now = this.clock.now();
        for (const [sink, n] of dropped) {
          this.metrics.dropped.inc({ sink }, n);
          this.droppedSinceLog.set(sink, (this.droppedSinceLog.get(sink) ?? 0) + n);
        }
        // ERROR: data was lost. Once per 10 s with the count since the last line, not once per page.
        if (this.droppedSinceLog.size > 0 && now - this.lastDropLogMs >= 10_000) {
          this.lastDropLogMs = now;
          for (const [sink, n] of this.droppedSinceLog) {
            this.logger.error({ sink, dropped: n }, 'journal full: dropped the oldest entries not yet delivered by this sink (buffer.when_full: drop_oldest)');
          }
          this.droppedSinceLog.clear();
        }
        return;
      }
      if (this.fullSince === undefined) {
        this.fullSince = this.clock.now();
        this.metrics.journalFull.set(1);
        this.logger.warn({ ...this.store.journalSize(), max_entries: this.config.buffer.max_entries, max_bytes: this.config.buffer.max_bytes }, 'journal full: polling paused until sinks catch up (buffer.when_full: block)');
      }
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.roomWaiters.delete(done);
          signal.removeEventListener('abort', done);
          clearTimeout(t);
          resolve();
        };
        const t = setTimeout(done, 1000);
        t.unref();
        this.roomWaiters.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private onSyncFailure(err: unknown): void {
    this.logger.fatal({ err: describeError(err) }, 'could not sync the state file to disk; nothing more can be committed');
    this.onFatal?.(err);
  }

  private afterAck(): void {
    const now = this.clock.now();
    if (now - this.lastTrimMs < 500 && this.roomWaiters.size === 0) return;
    this.lastTrimMs = now;
    try {
      this.store.trimJournal();
    } catch (err) {
      this.logger.warn({ err: describeError(err) }, 'could not trim the journal; will try again');
    }
    for (const w of [...this.roomWaiters]) w();
  }

  private updateGauges(): void {
    this.lastTickMs = Date.now();
    this.heapGrowth.tick();
    try {
      const size = this.store.journalSize();
      this.metrics.journalEntries.set(size.entries);
      this.metrics.journalBytes.set(size.bytes);
      const last = this.store.lastSeq();
      const perEntry = size.entries > 0 ? size.bytes / size.entries : 0;
      for (const row of this.store.listSinks()) {
        const backlog = Math.min(size.entries, Math.max(0, last - row.cursor));
        this.metrics.backlogEntries.set({ sink: row.name }, backlog);
        this.metrics.backlogBytes.set({ sink: row.name }, Math.round(backlog * perEntry));
      }
    } catch {
      // the store is closing
    }
  }

  /** Current checkpoints, cursors and backlogs. */
  status(): DaemonStatus {
    return buildStatus(this.store, this.clock.now(), {
      models: this.config.models.map((m) => m.id),
      sinkTypes: new Map(this.config.sinks.map((s) => [s.name, s.type])),
      modelErrors: new Map([...this.pollers].map(([id, p]) => [id, p.lastError?.message])),
      modelWindows: new Map([...this.pollers].map(([id, p]) => [id, { splits: p.windowEvents.splits, abandoned: [...p.windowEvents.abandoned] }])),
      sinkErrors: new Map([...this.sinks].map(([n, s]) => [n, s.delivery.lastError?.message])),
      sinkFailingSince: new Map([...this.sinks].map(([n, s]) => [n, s.delivery.failingSinceMs])),
    });
  }

  /** Liveness: the daemon's periodic work ran within the last 10 seconds. */
  loopAlive(): boolean {
    return Date.now() - this.lastTickMs < 10_000 && this.stopPromise === undefined;
  }

  /**
   * Applies a new, already validated config: models and sinks added or removed (or a
   * sink whose settings changed) take effect without a restart; buffer and health
   * settings too, and `api.max_response_bytes` (a model paused by a page over the limit
   * tries again). Other changes to api, state and poll need a restart and are reported.
   */
  async reload(next: Config): Promise<void> {
    if (this.stopPromise) return;
    const prev = this.config;
    const limit = next.api.max_response_bytes;
    const api = { ...prev.api, max_response_bytes: limit };
    const needRestart = (['api', 'state', 'poll'] as const).filter((k) => JSON.stringify(k === 'api' ? api : prev[k]) !== JSON.stringify(next[k]));
    if (needRestart.length > 0) this.logger.warn({ sections: needRestart }, 'reload: changes to these sections take effect at the next restart');
    this.config = { ...next, api, state: prev.state, poll: prev.poll };
    if (limit !== prev.api.max_response_bytes) {
      this.client.setMaxResponseBytes?.(limit);
      this.logger.info({ from: prev.api.max_response_bytes, to: limit }, 'reload: api.max_response_bytes changed');
      for (const p of this.pollers.values()) p.retryOversized();
    }
    const nextModels = new Set(next.models.map((m) => m.id));
    for (const [id, poller] of [...this.pollers]) {
      if (!nextModels.has(id)) {
        await poller.stop();
        this.pollers.delete(id);
        this.fair.forget(id);
        this.logger.info({ model: id }, 'reload: model removed (its checkpoint is kept)');
      }
    }
    const before = new Set(this.pollers.keys());
    this.startPollers(this.config);
    for (const id of this.pollers.keys()) if (!before.has(id)) this.logger.info({ model: id }, 'reload: model added');
    const nextSinks = new Map(next.sinks.map((s) => [s.name, s]));
    for (const [name, running] of [...this.sinks]) {
      const wanted = nextSinks.get(name);
      if (wanted && JSON.stringify(wanted) === JSON.stringify(running.config)) continue;
      await retireSink({ name, sink: running.sink, delivery: running.delivery }, sinkBoundMs(running.config), this.logger);
      this.sinks.delete(name);
      if (!wanted) {
        this.store.removeSinksExcept(next.sinks.map((s) => s.name));
        this.logger.info({ sink: name }, 'reload: sink removed');
      }
    }
    for (const sc of next.sinks) {
      if (this.sinks.has(sc.name)) continue;
      await this.startSink(sc);
      this.logger.info({ sink: sc.name }, 'reload: sink started');
    }
    this.logger.info({ models: next.models.length, sinks: next.sinks.length }, 'configuration reloaded');
  }

  /** True while the state store answers (readiness). */
  storeHealthy(): boolean {
    try {
      this.store.journalSize();
      this.store.lastSeq();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Shutdown: stop polling (the page in flight commits), give the sinks up to `drainMs`
   * (default a third of shutdown_timeout, at most 10 s) to deliver what the journal holds,
   * stop deliveries (the batch in flight finishes), flush and close sinks (each sink's steps
   * bounded by its timeout and a sixth of shutdown_timeout), close the client
   * and the store, release the lock. What is not delivered stays in the journal for the next
   * start. One failing step does not skip the rest. Idempotent.
   */
  stop(options: { drainMs?: number } = {}): Promise<void> {
    this.stopPromise ??= this.doStop(options.drainMs ?? Math.min(this.config.shutdown_timeout / 3, 10_000));
    return this.stopPromise;
  }

  private async waitDrained(drainMs: number): Promise<void> {
    const deadline = Date.now() + drainMs;
    for (;;) {
      const last = this.store.lastSeq();
      if (this.store.listSinks().every((s) => s.cursor >= last)) return;
      if (Date.now() >= deadline) {
        this.logger.info({ backlog: this.status().sinks.map((s) => ({ sink: s.name, entries: s.backlogEntries })) }, 'shutdown: undelivered entries stay in the journal for the next start');
        return;
      }
      for (const s of this.sinks.values()) s.delivery.drain();
      await sleep(50);
    }
  }

  private async doStop(drainMs: number): Promise<void> {
    const step = async (what: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        this.logger.error({ err: describeError(err) }, `shutdown: ${what} failed`);
      }
    };
    this.logger.info('stopping');
    await step('stop polling', () => Promise.all([...this.pollers.values()].map((p) => p.stop())));
    this.queue.clear();
    if (drainMs > 0) await step('drain sinks', () => this.waitDrained(drainMs));
    // Each sink's stop, flush and close are bounded by its timeout and by a sixth of
    // shutdown_timeout, so that a sink that hangs cannot hold the shutdown past it.
    const sinkCapMs = this.config.shutdown_timeout / 6;
    await step('stop sinks', () => Promise.all([...this.sinks].map(([name, s]) => retireSink({ name, sink: s.sink, delivery: s.delivery }, sinkBoundMs(s.config), this.logger, sinkCapMs))));
    await step('close api client', () => this.client.close());
    clearInterval(this.gaugeTimer);
    this.metrics.setLagSource(undefined);
    this.heapGrowth.reset();
    clearInterval(this.keepAlive);
    await step('finish the journal sync', () => this.groupCommit.settled());
    await step('close state', () => this.store.close());
    await step('release lock', () => this.lock.release());
    this.logger.info('stopped');
  }

  /** Waits `ms` (test and demo helper). */
  static sleep = sleep;
}

/** Builds the status snapshot from the store (also used by `mls status` without a daemon). */
export function buildStatus(
  store: StateStore,
  nowMs: number,
  ctx: {
    models?: readonly string[];
    sinkTypes?: ReadonlyMap<string, string>;
    modelErrors?: ReadonlyMap<string, string | undefined>;
    modelWindows?: ReadonlyMap<string, ModelWindowEvents>;
    sinkErrors?: ReadonlyMap<string, string | undefined>;
    /** Since when (clock ms) each sink has been failing without an acknowledgement. */
    sinkFailingSince?: ReadonlyMap<string, number | undefined>;
  } = {},
): DaemonStatus {
  const size = store.journalSize();
  const lastSeq = store.lastSeq();
  const dlq = store.deadLetterCounts();
  const checkpoints = store.listCheckpoints().filter((c) => !ctx.models || ctx.models.includes(c.modelId));
  return {
    installationId: store.installationId,
    models: checkpoints.map((c) => {
      const windows = ctx.modelWindows?.get(c.modelId);
      return {
        id: c.modelId,
        startMs: c.startMs,
        watermarkMs: c.watermarkMs,
        lagSeconds: lagSeconds(c, nowMs),
        window: c.window ? { fromMs: c.window.fromMs, toMs: c.window.toMs, hasToken: c.window.nextToken !== undefined } : undefined,
        lastError: ctx.modelErrors?.get(c.modelId),
        ...(windows ? { windowSplits: windows.splits, abandonedWindows: windows.abandoned } : {}),
      };
    }),
    sinks: store.listSinks().map((s) => ({
      name: s.name,
      type: ctx.sinkTypes?.get(s.name) ?? 'unknown',
      cursor: s.cursor,
      backlogEntries: Math.min(size.entries, Math.max(0, lastSeq - s.cursor)),
      delivered: s.delivered,
      dropped: s.dropped,
      deadLetters: dlq.get(s.name)?.entries ?? 0,
      lastError: ctx.sinkErrors?.get(s.name),
      failingSeconds: failingSeconds(ctx.sinkFailingSince?.get(s.name), nowMs),
    })),
    journal: { ...size, lastSeq },
  };
}

function failingSeconds(sinceMs: number | undefined, nowMs: number): number | undefined {
  return sinceMs === undefined ? undefined : Math.max(0, (nowMs - sinceMs) / 1000);
}
