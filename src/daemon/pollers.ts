//! The daemon's model pollers and what they share: one request queue under the global
//! concurrency and rate limits (with per-model priorities, so that no model starves the
//! others), the cadence that sets each model's poll period within that budget, and one
//! scheduler that starts every model's poll cycles on a timer grid. Started from the config,
//! added or removed at a reload, stopped first at shutdown.
import type { Logger } from 'pino';
import type PQueue from 'p-queue';
import type { Config } from '../config/index.js';
import type { ApiClient } from '../api/types.js';
import type { PageCommit, PageToCommit, StartAtRecord, StateStore } from '../journal/store.js';
import { ModelPoller } from '../poller/model-poller.js';
import { FairSchedule, requestQueue } from '../poller/fair-schedule.js';
import { PollScheduler, gridTimer, pollGridMs, type PollTimer } from '../poller/poll-scheduler.js';
import { PollCadence, budgetShortfall } from '../poller/cadence.js';
import { logStartAtChanges, showStartAt, startAtChanges } from '../poller/start-at.js';
import { resolveStart } from '../time/start-at.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Clock } from '../time/clock.js';
import type { ModelWindowEvents } from './status.js';
import { minIntervalMs, modelStartAt, pollerSettingsOf } from './wiring.js';

/** What {@link RunningPollers} works with. */
export interface RunningPollersDeps {
  /** The poll settings, fixed for the daemon's life (a reload of `poll` needs a restart). */
  poll: Config['poll'];
  store: StateStore;
  client: ApiClient;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
  pruneEveryMs: number | undefined;
  /** Backpressure: undefined when the journal has room for another page now, else resolves when it has. */
  waitForRoom(signal: AbortSignal): Promise<void> | undefined;
  /** Commits a page; resolves once it is durable. */
  commit(page: PageToCommit): Promise<PageCommit>;
  /** A page appended entries. */
  onAppend(): void;
  /** A window was fetched to its end. */
  onWindowDone(): void;
  /** The timer the poll scheduler sleeps on (default: a grid of a tenth of `min_interval`); tests pass virtual time. */
  timer?: PollTimer;
  /** Monotonic ms for the request budget's bookkeeping (default `performance.now`). */
  monotonicNow?(): number;
}

/** The pollers of a running daemon, by model id. */
export class RunningPollers {
  private readonly pollers = new Map<string, ModelPoller>();
  private readonly queue: PQueue;
  private readonly fair: FairSchedule;
  private readonly scheduler: PollScheduler;
  private readonly cadence: PollCadence;
  private readonly minIntervalMs: number;

  constructor(private readonly d: RunningPollersDeps) {
    const { poll } = d;
    const rate = poll.rate_limit;
    this.queue = requestQueue(poll.concurrency, rate);
    this.minIntervalMs = minIntervalMs({ poll } as Config);
    this.cadence = new PollCadence({
      intervalMs: poll.interval,
      minIntervalMs: this.minIntervalMs,
      ratePerSec: rate ? (rate.count * 1000) / rate.perMs : undefined,
      concurrency: poll.concurrency,
    });
    this.fair = new FairSchedule(this.queue, poll.interval, d.monotonicNow, (ms) => this.cadence.noteLatency(ms));
    this.scheduler = new PollScheduler(d.timer ?? gridTimer(pollGridMs(this.minIntervalMs)), d.monotonicNow);
  }

  /** Starts a poller for each model of `config` that has none; returns the ids of those started. */
  start(config: Config): string[] {
    const { store, logger } = this.d;
    // A changed start_at is said once (it moves no stored start), then recorded.
    const models = config.models.map((m) => ({ id: m.id, startAt: modelStartAt(config, m), checkpoint: store.getCheckpoint(m.id) }));
    const adopted: StartAtRecord[] = [];
    const changes = startAtChanges(models, (modelId, startAt) => adopted.push({ modelId, startAt }));
    store.recordStartAts(adopted);
    logStartAtChanges(logger.child({ component: 'poller' }), changes);
    // The models new to the state file get their checkpoints in one transaction, not one synced commit each.
    const nowMs = this.d.clock.now();
    store.ensureCheckpoints(models.filter((m) => !m.checkpoint && !this.pollers.has(m.id)).map((m) => ({ modelId: m.id, startMs: resolveStart(m.startAt, nowMs), startAt: showStartAt(m.startAt) })));
    const started: string[] = [];
    const toStart: ModelPoller[] = [];
    // Shared by every poller: with thousands of models, a closure each adds up.
    const waitForRoom = (signal: AbortSignal) => this.d.waitForRoom(signal);
    const onAppend = () => this.d.onAppend();
    const onWindowDone = () => this.d.onWindowDone();
    const commit = (page: PageToCommit) => this.d.commit(page);
    const settingsOf = pollerSettingsOf(config, this.d.pruneEveryMs);
    // One logger for all pollers: every line they log names its model (a child logger per model held a binding that repeated it).
    const pollerLogger = logger.child({ component: 'poller' });
    for (const m of config.models) {
      if (this.pollers.has(m.id)) continue;
      this.d.metrics.initModel(m.id);
      this.cadence.add(m.id);
      const poller = new ModelPoller({
        modelId: m.id,
        settings: settingsOf(m),
        store,
        client: this.d.client,
        schedule: (fn, kind) => this.fair.add(m.id, fn, kind),
        nextPoll: (cycle) => this.cadence.next(m.id, cycle, this.d.clock.now()),
        waitForRoom,
        onAppend,
        onWindowDone,
        clock: this.d.clock,
        logger: pollerLogger,
        metrics: this.d.metrics,
        scheduler: this.scheduler,
        commit,
      });
      this.pollers.set(m.id, poller);
      started.push(m.id);
      toStart.push(poller);
    }
    // The scheduler starts their first cycles a few hundred at a time.
    for (const p of toStart) p.start();
    this.warnIfShort();
    return started;
  }

  /**
   * Asks that `modelId` be polled every `poll.min_interval` until `untilMs` (epoch ms of the
   * daemon's clock), whatever its polls return, e.g. so that a multiline group held open
   * until the model's checkpoint passes its last line closes promptly.
   *
   * - A model waiting out a longer period is polled within `min_interval` of its last
   *   poll; calls never make it poll more often than that.
   * - Calls extend the time, never shorten it; calling again before it ends is cheap.
   * - It costs what an active model costs, within the same budget: when the budget is
   *   short, hurried models share what is left after every model's poll per interval,
   *   like active ones.
   * - Returns false (and does nothing) for a model that is not polled.
   */
  hurry(modelId: string, untilMs: number): boolean {
    const poller = this.pollers.get(modelId);
    if (!poller) return false;
    const wasHurried = this.cadence.hurried(modelId, this.d.clock.now());
    this.cadence.hurry(modelId, untilMs);
    if (!wasHurried && untilMs > this.d.clock.now()) poller.wake(this.minIntervalMs);
    return true;
  }

  /** Sets the gauges of the poll budget (called once a second). */
  updateGauges(): void {
    const { metrics, poll } = this.d;
    const f = this.cadence.figures();
    metrics.budgetUtilization.set({ kind: 'required' }, round2(f.utilization));
    const r = this.fair.rates();
    const rate = poll.rate_limit;
    const byRate = rate ? r.requestsPerSec / ((rate.count * 1000) / rate.perMs) : 0;
    metrics.budgetUtilization.set({ kind: 'used' }, round2(Math.max(byRate, r.inFlight / poll.concurrency)));
    metrics.activeModels.set(this.cadence.active);
  }

  /** Says once per start or reload when the budget cannot poll every model once per interval. */
  private warnIfShort(): void {
    const short = budgetShortfall(this.cadence.figures(), this.d.poll.interval);
    if (short) this.d.logger.child({ component: 'poller' }).warn(short.fields, short.message);
    this.updateGauges();
  }

  /** Stops the pollers of models not in `keep` (their checkpoints stay); returns their ids. */
  async removeExcept(keep: ReadonlySet<string>): Promise<string[]> {
    const removed: string[] = [];
    for (const [id, poller] of [...this.pollers]) {
      if (keep.has(id)) continue;
      await poller.stop();
      this.pollers.delete(id);
      this.fair.forget(id);
      this.cadence.forget(id);
      removed.push(id);
    }
    await this.d.metrics.removeModels(removed);
    return removed;
  }

  /** Whether a model's poller is paused (its checkpoint does not move): its token was refused, or a page is over the size limit. */
  modelPaused(modelId: string): boolean {
    return this.pollers.get(modelId)?.health.stopped ?? false;
  }

  /** `api.max_response_bytes` changed: a model paused by a page over the limit tries again. */
  retryOversized(): void {
    for (const p of this.pollers.values()) p.retryOversized();
  }

  /** Stops every poller (the page in flight commits) and drops the requests still queued. */
  async stopAll(): Promise<void> {
    try {
      await Promise.all([...this.pollers.values()].map((p) => p.stop()));
      await this.scheduler.stop();
    } finally {
      this.queue.clear();
    }
  }

  /** Poll cycles running now (tests on virtual time move the clock only when none is). */
  get cyclesRunning(): number {
    return this.scheduler.running;
  }

  /** Each model's last error and window events, for the status. */
  health(): { errors: Map<string, string | undefined>; windows: Map<string, ModelWindowEvents> } {
    const all = [...this.pollers];
    return {
      errors: new Map(all.map(([id, p]) => [id, p.health.lastError?.message])),
      windows: new Map(all.map(([id, p]) => [id, { splits: p.windowEvents.splits, abandoned: [...p.windowEvents.abandoned] }])),
    };
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
