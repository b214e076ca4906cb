//! Polls one model: plans windows, has each fetched and committed page by page
//! (fetch-window.ts), and says how long to wait before the next poll (the daemon's
//! scheduler, poll-scheduler.ts, does the waiting). A crash resumes the window in progress
//! from its saved token. What follows a window cut short, a failed fetch or a page over the
//! size limit is decided here.
import type { WindowStart } from '../journal/store.js';
import type { ModelCounters } from '../telemetry/metrics.js';
import { firstWindowKind, pruneHorizonMs, rereadAges, type PlannedWindow, type PlannerSettings } from './planner.js';
import { jittered } from '../time/backoff.js';
import { WindowEvents } from './window-events.js';
import { resolveStart, type StartAt } from '../time/start-at.js';
import { showStartAt } from './start-at.js';
import { StateWriteRetry, isStateError } from '../journal/state-errors.js';
import { IngestDelays } from './auto-settle.js';
import { ModelHealth } from './model-health.js';
import { fetchWindow, releasePage, type WindowFetchContext, type WindowFetchDeps, type WindowFetchSettings } from './fetch-window.js';
import { Abandoner } from './abandon.js';
import type { Pollable, PollScheduler, ScheduleHandle } from './poll-scheduler.js';

/** Settings of one model's poller. */
export interface ModelPollerSettings extends PlannerSettings, WindowFetchSettings {
  intervalMs: number;
  /** Shortest time between two polls (an active model's period); default `intervalMs`. */
  minIntervalMs?: number;
  /**
   * `auto` learns the settle (and the first re-read age) from the model's ingest delays,
   * starting from `settleMs`; absent or a number: `settleMs` is fixed.
   */
  settle?: number | 'auto';
  jitter: number;
  startAt: StartAt;
  /** First delay after the token was refused; doubles up to 10 minutes. */
  authRetryMs: number;
  /** Least time between two prunings of the model's dedupe keys (default a minute; tests shorten it). */
  pruneEveryMs?: number;
}

/** What a poller needs from the daemon: what its window fetches need, and the pace of its polls. */
export interface ModelPollerDeps extends WindowFetchDeps {
  settings: ModelPollerSettings;
  /**
   * Called when a poll cycle ends (a fresh window and the re-reads due with it): whether it
   * appended entries and how many requests it sent. Returns the wait before the next
   * cycle, before jitter (default: the interval).
   */
  nextPoll?(cycle: { appended: boolean; requests: number }): number;
  /** Runs the poller's cycles, waiting between them (one scheduler for all models). */
  scheduler: PollScheduler;
}

const PRUNE_EVERY_MS = 60_000;

/** The polls of one model. `stop()` lets the page in flight finish and commit. */
export class ModelPoller implements Pollable {
  private readonly stopController = new AbortController();
  /** Its place in the scheduler, once started. */
  private handle: ScheduleHandle | undefined;
  /** The model's checkpoint was made sure of (the first cycle). */
  private ready = false;
  private clockWarned = false;
  private readonly stateRetry: StateWriteRetry;
  private prunedAt = -Infinity;
  /** Failures, pauses (`stopped`: the checkpoint does not move) and the last error, for status output. */
  readonly health: ModelHealth;
  /** Windows cut short or abandoned, token cycles: for status output. */
  readonly windowEvents: WindowEvents;
  /** This model's per-model metrics (plain numbers, exported at scrape time). */
  private readonly counters: ModelCounters;
  /** Polling is paused by a page over the size limit, until retryOversized(). */
  private oversizedPause = false;
  /** In a wait between polls, which wake() cuts short. */
  private pausing = false;
  /** The wait between polls was cut short by wake(): the next cycle plans with `min_interval`. */
  private woken = false;
  /** When the current wait between polls began (the clock's ms). */
  private pauseStartedAt = 0;
  /** How late this model's entries become visible, and the settle they call for. */
  readonly delays: IngestDelays;
  /** The wait between two poll cycles now. */
  private periodMs: number;
  /** The settings the planner gets: the configured ones with the learned settle, first age and period. */
  private planning: PlannerSettings;
  /** This poll cycle so far; reset (not replaced) at each pause. */
  private readonly cycleFigures = { appended: false, requests: 0 };
  /** What each window fetch works with (one object for the poller's life). */
  private readonly fetchContext: WindowFetchContext;

  constructor(private readonly d: ModelPollerDeps) {
    const s = d.settings;
    const ages = s.reread?.mode === 'sparse' ? rereadAges(s, s.reread.agesMs) : [];
    this.delays = new IngestDelays({
      settle: s.settle ?? s.settleMs,
      fallbackSettleMs: s.settleMs,
      firstAgeMs: ages.length > 1 ? ages[0] : undefined,
      lookbackMs: s.lookbackMs,
      minIntervalMs: s.minIntervalMs ?? s.intervalMs,
    });
    this.periodMs = s.intervalMs;
    this.counters = d.metrics.initModel(d.modelId);
    this.health = new ModelHealth({ modelId: d.modelId, metrics: d.metrics, counters: this.counters, logger: d.logger, now: () => d.clock.now(), authRetryMs: s.authRetryMs });
    this.planning = this.planningSettings();
    // Cuts of a window keep the plan state the planner made it with (the learned first age included).
    // A plain function, not a getter: an object literal with a getter is a dictionary of its own for each of 10,000 models.
    this.windowEvents = new WindowEvents({ modelId: d.modelId, store: d.store, metrics: d.metrics, logger: d.logger, clock: d.clock, settings: () => this.planning });
    this.stateRetry = new StateWriteRetry(d.logger, { model: d.modelId }, {
      paused: 'could not write the state file (disk full?); polling of this model pauses and resumes from its checkpoint',
      resumed: 'state file writable again; polling resumed',
    });
    const stop = this.stopController.signal;
    this.fetchContext = { d, health: this.health, windowEvents: this.windowEvents, delays: this.delays, counters: this.counters, cycle: this.cycleFigures, stop, abandon: new Abandoner(stop, releasePage) };
  }

  /** Starts polling (once): the first cycle is due at once. */
  start(): void {
    if (this.stopping || this.handle) return; // removed before its turn to start came
    this.handle = this.d.scheduler.add(this);
  }

  /** Stops polling; resolves when the page in flight is committed. */
  stop(): Promise<void> {
    this.stopController.abort();
    return this.handle?.remove() ?? Promise.resolve();
  }

  /**
   * Cuts the wait before the next poll to at most `withinMs` from its start (the model was
   * asked to hurry). A poll in progress, or a pause for an error, is not cut short.
   */
  wake(withinMs: number): void {
    if (!this.pausing || this.woken) return;
    this.woken = true;
    this.handle?.dueIn(withinMs - (this.d.clock.now() - this.pauseStartedAt));
  }

  /** The settings to plan with: the configured ones, with the settle, first age and period of now. */
  private planningSettings(): PlannerSettings {
    const s = this.d.settings;
    const reread = s.reread?.mode === 'sparse' ? { ...s.reread, firstAgeMs: this.delays.firstAgeMs } : s.reread;
    return { ...s, settleMs: this.delays.settleMs, pollEveryMs: this.periodMs, ...(reread ? { reread } : {}) };
  }

  /**
   * Ends a pause caused by a page over `api.max_response_bytes` (the limit was changed):
   * the window is asked for again.
   */
  retryOversized(): void {
    if (!this.oversizedPause) return;
    this.oversizedPause = false;
    this.handle?.dueIn(0);
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  /** One poll cycle (see {@link Pollable.cycle}): polls until it is time to wait. */
  async cycle(): Promise<number | undefined> {
    this.pausing = false;
    if (this.woken) {
      // Woken to hurry: this cycle and the next plan with the shorter period.
      this.woken = false;
      this.periodMs = this.d.settings.minIntervalMs ?? this.d.settings.intervalMs;
      this.planning = this.planningSettings();
    }
    try {
      return await this.run();
    } catch (err) {
      if (isStateError(err)) {
        // The state file refused a write (disk full?): the model resumes from its checkpoint after a pause.
        this.health.stateError(err);
        return this.stopping ? undefined : this.stateRetry.failed(err);
      }
      this.d.logger.error({ err, model: this.d.modelId }, 'model poller stopped by an unexpected error');
      return undefined;
    }
  }

  /** Polls until it is time to wait; returns the wait (ms), or undefined when stopped. */
  private async run(): Promise<number | undefined> {
    const { store, clock, settings, modelId, metrics, logger } = this.d;
    if (!this.ready) {
      // A write transaction only for a model new to the state file: a restart with thousands of models would otherwise start with as many.
      if (!store.getCheckpoint(modelId)) store.ensureCheckpoint(modelId, resolveStart(settings.startAt, clock.now()), showStartAt(settings.startAt));
      this.counters.up.set(1);
      this.ready = true;
    }
    while (!this.stopping) {
      let cp = store.getCheckpoint(modelId)!;
      let begin: WindowStart | undefined;
      let planned: PlannedWindow | undefined;
      if (!cp.window) {
        const now = clock.now();
        const next = this.windowEvents.next(cp, now);
        planned = next;
        if (!next && cp.watermarkMs !== undefined && now - this.planning.settleMs < cp.watermarkMs - settings.intervalMs) {
          if (!this.clockWarned) logger.warn({ model: modelId, behindMs: cp.watermarkMs - now }, 'the clock is behind this model\'s watermark; waiting for it to catch up (nothing is skipped)');
          this.clockWarned = true;
        } else if (next) this.clockWarned = false;
        if (!next) return this.endCycle(now);
        // Recorded with the first page: a crash before it simply plans the same window again.
        begin = { fromMs: next.fromMs, toMs: next.toMs, planStateAfter: next.planStateAfter };
        cp = { ...cp, window: { fromMs: next.fromMs, toMs: next.toMs, nextToken: undefined }, fetchId: cp.fetchId + 1 };
        if (logger.isLevelEnabled('debug')) {
          logger.debug({ model: modelId, kind: next.kind, from: new Date(next.fromMs).toISOString(), to: new Date(next.toMs).toISOString() }, 'window started');
        }
      }
      const outcome = await fetchWindow(this.fetchContext, cp, begin, planned);
      if (outcome.kind === 'stopped') return undefined;
      if (outcome.kind === 'shortened') continue;
      if (outcome.kind === 'too_large') {
        // A 1 ms window still over the size limit: paused until the limit changes.
        this.health.oversized(outcome.error.code, this.windowEvents.oversized(outcome.error));
        this.oversizedPause = true;
        return Number.POSITIVE_INFINITY;
      }
      if (outcome.kind === 'failed') return outcome.retryInMs;
      this.health.polled();
      this.stateRetry.succeeded();
      const done = store.getCheckpoint(modelId)!;
      this.counters.polls.inc();
      // One reading for what follows: nothing below waits.
      const now = clock.now();
      this.counters.lastSuccess.set(now / 1000);
      // Pruning only frees space: once a minute is enough, and spares idle models a write per poll.
      // A model that never returned an entry has no dedupe keys: nothing to prune (a statement a
      // minute for each of 10,000 quiet models was a storm of them a minute after every start).
      if (done.watermarkMs !== undefined && done.lastEntryNs !== undefined && performance.now() - this.prunedAt >= (settings.pruneEveryMs ?? PRUNE_EVERY_MS)) {
        store.pruneKeys(modelId, pruneHorizonMs({ ...done, watermarkMs: done.watermarkMs }, this.planning));
        this.prunedAt = performance.now();
      }
      if (this.delays.update(now)) {
        this.planning = this.planningSettings();
        // Series only for models whose settle was learned: thousands of quiet models need none.
        metrics.settle.set({ model: modelId }, this.delays.settleMs / 1000);
        const age = this.delays.firstAgeMs ?? this.delays.configuredFirstAgeMs;
        if (age !== undefined) metrics.firstRereadAge.set({ model: modelId }, age / 1000);
      }
      // Caught up: wait for the next poll, unless a re-read is due. Behind: fetch the next window at once.
      const caughtUp = done.watermarkMs !== undefined && done.watermarkMs >= now - this.planning.settleMs - settings.intervalMs;
      if (caughtUp && firstWindowKind(done, now, this.planning) !== 'reread') return this.endCycle(now);
    }
    return undefined;
  }

  /** Ends a poll cycle at `nowMs` (the clock's): the period the cadence gives (jittered), which wake() may cut short. */
  private endCycle(nowMs: number): number | undefined {
    const period = this.d.nextPoll?.(this.cycleFigures) ?? this.d.settings.intervalMs;
    this.cycleFigures.appended = false;
    this.cycleFigures.requests = 0;
    if (period !== this.periodMs) {
      this.periodMs = period;
      this.planning = this.planningSettings();
    }
    if (this.stopping) return undefined;
    this.pauseStartedAt = nowMs;
    this.pausing = true;
    return jittered(period, this.d.settings.jitter);
  }
}
