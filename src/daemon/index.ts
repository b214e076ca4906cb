//! Assembles and runs the pipeline: api client → model pollers (windows, checkpoints,
//! dedupe) → journal → per-sink delivery loops → sinks. Owns start-up order, reload and the
//! shutdown sequence. Beside it: the pollers (pollers.ts) and sinks (sinks.ts) it runs, the
//! config mapping (wiring.ts), the journal's bounds (backpressure.ts), the periodic work and
//! the handle that keeps the process up (heartbeat.ts), the status snapshot (status.ts).
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { createApiClient } from '../api/client.js';
import type { ApiClient } from '../api/types.js';
import { StateStore, type WalSync } from '../journal/store.js';
import { acquireStateLock, type StateLock } from '../journal/lock.js';
import { GroupCommit } from '../journal/group-commit.js';
import { sleep } from '../time/backoff.js';
import { modelLags } from '../poller/lag.js';
import { Metrics } from '../telemetry/metrics.js';
import { steadyClock, type Clock } from '../time/clock.js';
import { describeError } from '../errors.js';
import { clientOptions } from './wiring.js';
import { Backpressure } from './backpressure.js';
import { Heartbeat } from './heartbeat.js';
import { buildStatus, type DaemonStatus } from './status.js';
import { restartSections } from './reload.js';
import { RunningSinks } from './sinks.js';
import { RunningPollers } from './pollers.js';
import { RecordsMeter } from './records-meter.js';
import { DaemonOperations } from './operations.js';
import { RATE_WINDOW_SECONDS, RecentRates } from './rates.js';
import { TapHub } from '../delivery/tap.js';

/** How long a model with an open multiline group is polled at `poll.min_interval` after the group was last seen open. */
const HURRY_MS = 5_000;

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
  /** Least time between two prunings of a model's dedupe keys (default a minute; tests shorten it). */
  pruneEveryMs?: number;
}

/** The running daemon. */
export class Daemon {
  readonly metrics: Metrics;
  /** What commands ask of the running daemon over the control channel (settings apply, dead letters). */
  readonly operations: DaemonOperations;
  /** The records each sink is handed, for `mls tap` (over the control channel). */
  readonly tap: TapHub;
  private readonly rates: RecentRates;
  private readonly pollers: RunningPollers;
  private readonly sinks: RunningSinks;
  private readonly groupCommit: GroupCommit;
  private readonly backpressure: Backpressure;
  private readonly heartbeat: Heartbeat;
  private stopPromise: Promise<void> | undefined;

  private constructor(
    private config: Config,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly store: StateStore,
    private readonly lock: StateLock,
    private readonly client: ApiClient,
    metrics: Metrics,
    private readonly onFatal: ((err: unknown) => void) | undefined,
    pruneEveryMs: number | undefined,
  ) {
    this.metrics = metrics;
    this.tap = new TapHub((sink, records) => metrics.sinkRecords.inc({ sink }, records));
    this.rates = new RecentRates(metrics);
    this.groupCommit = new GroupCommit(store, {
      onDurable: () => this.sinks.notify(),
      onSyncFailure: (err) => this.onSyncFailure(err),
    });
    this.backpressure = new Backpressure({ store, metrics, logger, clock, buffer: () => this.config.buffer });
    this.sinks = new RunningSinks({
      store,
      metrics,
      logger,
      clock,
      onAck: () => this.backpressure.afterAck(),
      environment: () => ({ models: this.config.models }),
      processing: () => this.config.processing,
      progress: {
        watermarkNs: (model) => {
          const ms = this.store.getCheckpoint(model)?.watermarkMs;
          return ms === undefined ? undefined : BigInt(ms) * 1_000_000n;
        },
        journaledThrough: (model) => this.store.journaledThrough(model),
        // Polling paused by a full journal moves no checkpoint: open groups close rather than
        // keep the rows that would make room.
        // (Not "has no poller": at a start the sinks reopen their groups before pollers start.)
        stopped: (model) => this.backpressure.blocked || !this.configured(model) || this.pollers.modelPaused(model),
        // Polled at min_interval for a while: the next poll moves the checkpoint past the group.
        hurry: (model) => void this.pollers.hurry(model, this.clock.now() + HURRY_MS),
      },
      meter: new RecordsMeter(metrics, () => this.config),
      tap: this.tap,
    });
    this.pollers = new RunningPollers({
      poll: config.poll,
      store,
      client,
      metrics,
      logger,
      clock,
      pruneEveryMs,
      waitForRoom: (signal) => this.backpressure.waitForRoom(signal),
      commit: (page) => this.groupCommit.commit(page),
      onAppend: () => this.sinks.notify(),
      onWindowDone: () => this.sinks.flushSoon(),
    });
    this.heartbeat = new Heartbeat({ store, metrics, logger, moreGauges: () => this.everySecond() });
    this.operations = new DaemonOperations({ store, client, logger, config: () => this.config, notifySinks: () => this.sinks.notify() });
    metrics.setLagSource(() => modelLags(this.store, this.config.models, this.clock.now()));
  }

  /** The heartbeat's work besides the journal gauges. */
  private everySecond(): void {
    this.pollers.updateGauges();
    this.rates.sample(this.clock.now()).catch((err: unknown) => this.logger.warn({ err: describeError(err) }, 'could not sample the rates of the status'));
  }

  #modelIds: { config: Config; ids: ReadonlySet<string> } | undefined;

  /** Whether `modelId` is a model of the config in force. */
  private configured(modelId: string): boolean {
    if (this.#modelIds?.config !== this.config) this.#modelIds = { config: this.config, ids: new Set(this.config.models.map((m) => m.id)) };
    return this.#modelIds.ids.has(modelId);
  }

  /** Validated config in, running daemon out. Takes the state lock first. */
  static async start(options: DaemonOptions): Promise<Daemon> {
    const { config, logger } = options;
    const metrics = options.metrics ?? new Metrics();
    const clock =
      options.clock ??
      steadyClock({ onStep: (delta) => logger.warn({ deltaMs: Math.round(delta) }, 'the wall clock stepped; windows keep following the monotonic clock until restart') });
    const lock = acquireStateLock(config.state.path);
    let store: StateStore | undefined;
    let daemon: Daemon | undefined;
    try {
      store = StateStore.open(config.state.path, { now: () => clock.now(), walSync: options.walSync });
      const client = createApiClient(clientOptions(config, metrics, logger.child({ component: 'api' })));
      daemon = new Daemon(config, logger, clock, store, lock, client, metrics, options.onFatal, options.pruneEveryMs);
      await daemon.sinks.startAll(config.sinks);
      daemon.pollers.start(config);
      daemon.heartbeat.beat();
      void daemon.operations.applyOnReload('start');
      logger.info({ models: config.models.length, sinks: config.sinks.map((s) => s.name), state: config.state.path }, 'mls daemon started');
      return daemon;
    } catch (err) {
      daemon?.heartbeat.release();
      store?.close();
      lock.release();
      throw err;
    }
  }

  private onSyncFailure(err: unknown): void {
    this.logger.fatal({ err: describeError(err) }, 'could not sync the state file to disk; nothing more can be committed');
    this.onFatal?.(err);
  }

  /** Current checkpoints, cursors and backlogs. */
  status(): DaemonStatus {
    const models = this.pollers.health();
    const sinks = this.sinks.health();
    return buildStatus(this.store, this.clock.now(), {
      models: this.config.models.map((m) => m.id),
      sinkTypes: new Map(this.config.sinks.map((s) => [s.name, s.type])),
      modelErrors: models.errors,
      modelWindows: models.windows,
      sinkErrors: sinks.errors,
      sinkFailingSince: sinks.failingSince,
      live: {
        windowSeconds: RATE_WINDOW_SECONDS,
        perSecond: (kind, name) => this.rates.perSecond(kind, name),
        paused: (model) => this.pollers.modelPaused(model),
        journalFull: this.backpressure.blocked,
        sinks: sinks.sending,
      },
    });
  }

  /** Liveness: the daemon's periodic work ran within the last 10 seconds, and it is not stopping. */
  loopAlive(): boolean {
    return this.heartbeat.alive() && this.stopPromise === undefined;
  }

  /** True while the state store answers (readiness). */
  storeHealthy(): boolean {
    try {
      this.store.journalSize();
      this.store.lastSeq();
      return true;
    } catch {
      return false; // the answer itself: /readyz says the state store is not open
    }
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
    const needRestart = restartSections(prev, next);
    if (needRestart.length > 0) this.logger.warn({ sections: needRestart }, 'reload: changes to these sections take effect at the next restart');
    this.config = { ...next, api, state: prev.state, poll: prev.poll };
    if (limit !== prev.api.max_response_bytes) {
      this.client.setMaxResponseBytes?.(limit);
      this.logger.info({ from: prev.api.max_response_bytes, to: limit }, 'reload: api.max_response_bytes changed');
      this.pollers.retryOversized();
    }
    for (const id of await this.pollers.removeExcept(new Set(next.models.map((m) => m.id)))) this.logger.info({ model: id }, 'reload: model removed (its checkpoint is kept)');
    for (const id of this.pollers.start(this.config)) this.logger.info({ model: id }, 'reload: model added');
    await this.sinks.apply(next.sinks, JSON.stringify(prev.processing) !== JSON.stringify(next.processing));
    this.logger.info({ models: next.models.length, sinks: next.sinks.length }, 'configuration reloaded');
    void this.operations.applyOnReload('reload');
  }

  /**
   * Shutdown: stop polling (the page in flight commits), give the sinks up to `drainMs`
   * (default a third of shutdown_timeout, at most 10 s) to deliver what the journal holds,
   * stop deliveries (the batch in flight finishes), flush and close sinks (each sink's steps
   * bounded by its timeout and a sixth of shutdown_timeout), close the client
   * and the store, release the lock. What is not delivered stays in the journal for the next
   * start. One failing step does not skip the rest. Idempotent. Once it resolves, nothing
   * of the daemon holds the process.
   */
  stop(options: { drainMs?: number } = {}): Promise<void> {
    this.stopPromise ??= this.doStop(options.drainMs ?? Math.min(this.config.shutdown_timeout / 3, 10_000));
    return this.stopPromise;
  }

  private async waitDrained(drainMs: number): Promise<void> {
    const deadline = Date.now() + drainMs;
    for (;;) {
      this.sinks.drain();
      const last = this.store.lastSeq();
      // A sink holding lines in open groups closes them once drained, then acknowledges their records.
      if (this.store.listSinks().every((s) => s.cursor >= last && s.holdSeq === undefined)) return;
      if (Date.now() >= deadline) {
        this.logger.info({ backlog: this.status().sinks.map((s) => ({ sink: s.name, entries: s.backlogEntries })) }, 'shutdown: undelivered entries stay in the journal for the next start');
        return;
      }
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
    try {
      await step('stop applying settings', () => this.operations.stop());
      await step('stop polling', () => this.pollers.stopAll());
      if (drainMs > 0) await step('drain sinks', () => this.waitDrained(drainMs));
      // Each sink's stop, flush and close are bounded by its timeout and by a sixth of
      // shutdown_timeout, so that a sink that hangs cannot hold the shutdown past it.
      const sinkCapMs = this.config.shutdown_timeout / 6;
      await step('stop sinks', () => this.sinks.retireAll(sinkCapMs));
      await step('close api client', () => this.client.close());
      this.heartbeat.quiet();
      this.metrics.setLagSource(undefined);
      await step('finish the journal sync', () => this.groupCommit.settled());
      await step('close state', () => this.store.close());
      await step('release lock', () => this.lock.release());
      this.logger.info('stopped');
    } finally {
      this.heartbeat.release();
    }
  }
}
