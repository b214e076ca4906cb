//! Polls one model: plans windows, has each fetched and committed page by page
//! (fetch-window.ts), and waits between polls. A crash resumes the window in progress from
//! its saved token. What follows a window cut short, a failed fetch or a page over the size
//! limit is decided here.
import type { ApiResponseTooLargeError } from '../api/errors.js';
import type { WindowStart } from '../journal/store.js';
import type { ModelCounters } from '../telemetry/model-metrics.js';
import { firstWindowKind, planWindows, pruneHorizonMs, type PlannedWindow, type PlannerSettings } from './planner.js';
import { jittered, sleep } from '../time/backoff.js';
import { WindowEvents } from './window-events.js';
import { resolveStart, type StartAt } from '../time/start-at.js';
import { showStartAt } from './start-at.js';
import { StateWriteRetry, retryOnStateErrors } from '../journal/state-errors.js';
import { IngestDelays } from './auto-settle.js';
import { ModelHealth } from './model-health.js';
import { fetchWindow, type WindowFetchContext, type WindowFetchDeps, type WindowFetchSettings } from './fetch-window.js';
import { TickTimer, type PollTimer } from './tick-timer.js';
import { planningFor } from './planning.js';

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
  /**
   * The sleeps between polls (default: a timer of the poller's own); the daemon shares one
   * grid among all models. A sleep ends early when its signal aborts or is woken; a sleep
   * that ends must stop listening to it (the same signal serves all the poller's sleeps).
   */
  timer?: PollTimer;
}

const PRUNE_EVERY_MS = 60_000;

/** The poll loop of one model. `stop()` lets the page in flight finish and commit. */
export class ModelPoller {
  private readonly stopController = new AbortController();
  private runPromise: Promise<void> | undefined;
  private clockWarned = false;
  private readonly stateRetry: StateWriteRetry;
  private prunedAt = -Infinity;
  /** Failures, pauses and the last error. */
  private readonly health: ModelHealth;
  /** Windows cut short or abandoned, token cycles: for status output. */
  readonly windowEvents: WindowEvents;
  /** This model's per-model metrics (plain numbers, exported at scrape time). */
  private readonly counters: ModelCounters;
  /** Set while polling is paused by a page over the size limit: ends the pause. */
  private resumeOversized: (() => void) | undefined;
  /** In a wait between polls, which wake() cuts short. */
  private pausing = false;
  /** The wait between polls was cut short by wake(). */
  private woken = false;
  private wakeWithinMs = 0;
  /** When the current wait between polls began (the clock's ms). */
  private pauseStartedAt = 0;
  private readonly timer: PollTimer;
  /** How late this model's entries become visible, and the settle they call for. */
  readonly delays: IngestDelays;
  /** The wait between two poll cycles now. */
  private periodMs: number;
  /** The settings the planner gets: the configured ones with the learned settle, first age and period. */
  private planning: PlannerSettings;
  /** This poll cycle so far; reset (not replaced) at each pause. */
  private readonly cycle = { appended: false, requests: 0 };
  /** What each window fetch works with (one object for the poller's life). */
  private readonly fetchContext: WindowFetchContext;

  constructor(private readonly d: ModelPollerDeps) {
    const s = d.settings;
    const firstAge = s.reread?.mode === 'sparse' ? s.reread.agesMs.filter((a) => a > 0 && a < s.lookbackMs).sort((a, b) => a - b)[0] : undefined;
    this.delays = new IngestDelays({
      settle: s.settle ?? s.settleMs,
      fallbackSettleMs: s.settleMs,
      firstAgeMs: firstAge,
      lookbackMs: s.lookbackMs,
      minIntervalMs: s.minIntervalMs ?? s.intervalMs,
    });
    this.periodMs = s.intervalMs;
    this.timer = d.timer ?? new TickTimer(1);
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
    this.fetchContext = { d, health: this.health, windowEvents: this.windowEvents, delays: this.delays, counters: this.counters, cycle: this.cycle, stop: this.stopController.signal };
  }

  get modelId(): string {
    return this.d.modelId;
  }

  /** Whether the model's checkpoint has stopped moving: the token was refused, or a page is over the size limit. */
  get stopped(): boolean {
    return this.health.stopped;
  }

  /** Last error, for status output. */
  get lastError(): { code: string; message: string; atMs: number } | undefined {
    return this.health.lastError;
  }

  /** Starts the loop (once). */
  start(): Promise<void> {
    if (this.stopping) return this.runPromise ?? Promise.resolve(); // removed before its turn to start came
    this.runPromise ??= this.loop().catch((err: unknown) => {
      this.d.logger.error({ err, model: this.d.modelId }, 'model poller stopped by an unexpected error');
    });
    return this.runPromise;
  }

  /** Stops polling; resolves when the page in flight is committed. */
  stop(): Promise<void> {
    this.stopController.abort();
    return this.runPromise ?? Promise.resolve();
  }

  /**
   * Cuts the wait before the next poll to at most `withinMs` from its start (the model was
   * asked to hurry). A poll in progress, or a pause for an error, is not cut short.
   */
  wake(withinMs: number): void {
    this.wakeWithinMs = withinMs;
    if (!this.pausing || this.woken) return;
    this.woken = true;
    this.timer.wake(this.stopController.signal);
  }

  /** The settings to plan with: the configured ones, with the settle, first age and period of now. */
  private planningSettings(): PlannerSettings {
    return planningFor(this.d.settings, this.delays.settleMs, this.periodMs, this.delays.firstAgeMs);
  }

  /**
   * Ends a pause caused by a page over `api.max_response_bytes` (the limit was changed):
   * the window is asked for again.
   */
  retryOversized(): void {
    this.resumeOversized?.();
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  private loop(): Promise<void> {
    return retryOnStateErrors(() => this.run(), (err) => {
      this.health.stateError(err);
      return this.stateRetry.failed(err);
    }, this.stopController.signal);
  }

  private async run(): Promise<void> {
    const { store, clock, settings, modelId, metrics, logger } = this.d;
    // A write transaction only for a model new to the state file: a restart with thousands of models would otherwise start with as many.
    if (!store.getCheckpoint(modelId)) store.ensureCheckpoint(modelId, resolveStart(settings.startAt, clock.now()), showStartAt(settings.startAt));
    this.counters.up = 1;
    while (!this.stopping) {
      let cp = store.getCheckpoint(modelId)!;
      let begin: WindowStart | undefined;
      let planned: PlannedWindow | undefined;
      if (!cp.window) {
        const now = clock.now();
        const next = this.windowEvents.clamp(cp, planWindows(cp, now, this.planning)[0], now);
        planned = next;
        if (!next && cp.watermarkMs !== undefined && now - this.planning.settleMs < cp.watermarkMs - settings.intervalMs) {
          if (!this.clockWarned) logger.warn({ model: modelId, behindMs: cp.watermarkMs - now }, 'the clock is behind this model\'s watermark; waiting for it to catch up (nothing is skipped)');
          this.clockWarned = true;
        } else if (next) this.clockWarned = false;
        if (!next) {
          await this.pauseBetweenPolls();
          continue;
        }
        // Recorded with the first page: a crash before it simply plans the same window again.
        begin = { fromMs: next.fromMs, toMs: next.toMs, planStateAfter: next.planStateAfter };
        cp = { ...cp, window: { fromMs: next.fromMs, toMs: next.toMs, nextToken: undefined }, fetchId: cp.fetchId + 1 };
        if (logger.isLevelEnabled('debug')) {
          logger.debug({ model: modelId, kind: next.kind, from: new Date(next.fromMs).toISOString(), to: new Date(next.toMs).toISOString() }, 'window started');
        }
      }
      const outcome = await fetchWindow(this.fetchContext, cp, begin, planned);
      if (outcome.kind === 'stopped') return;
      if (outcome.kind === 'shortened') continue;
      if (outcome.kind === 'too_large') {
        await this.pauseOversized(outcome.error);
        continue;
      }
      if (outcome.kind === 'failed') {
        await sleep(outcome.retryInMs, this.stopController.signal);
        continue;
      }
      this.health.polled();
      this.stateRetry.succeeded();
      const done = store.getCheckpoint(modelId)!;
      this.counters.polls++;
      this.counters.lastSuccessSeconds = clock.now() / 1000;
      // Pruning only frees space: once a minute is enough, and spares idle models a write per poll.
      // A model that never returned an entry has no dedupe keys: nothing to prune (a statement a
      // minute for each of 10,000 quiet models was a storm of them a minute after every start).
      if (done.watermarkMs !== undefined && done.lastEntryNs !== undefined && performance.now() - this.prunedAt >= (settings.pruneEveryMs ?? PRUNE_EVERY_MS)) {
        store.pruneKeys(modelId, pruneHorizonMs({ ...done, watermarkMs: done.watermarkMs }, this.planning));
        this.prunedAt = performance.now();
      }
      if (this.delays.update(clock.now())) {
        this.planning = this.planningSettings();
        // Series only for models whose settle was learned: thousands of quiet models need none.
        metrics.settle.set({ model: modelId }, this.delays.settleMs / 1000);
        const age = this.delays.firstAgeMs ?? this.delays.configuredFirstAgeMs;
        if (age !== undefined) metrics.firstRereadAge.set({ model: modelId }, age / 1000);
      }
      // Caught up: wait for the next poll, unless a re-read is due. Behind: fetch the next window at once.
      const caughtUp = done.watermarkMs !== undefined && done.watermarkMs >= clock.now() - this.planning.settleMs - settings.intervalMs;
      if (caughtUp && firstWindowKind(done, clock.now(), this.planning) !== 'reread') await this.pauseBetweenPolls();
    }
  }

  /** Ends a poll cycle: waits the period the cadence gives (jittered), or until woken. */
  private pauseBetweenPolls(): Promise<void> {
    const period = this.d.nextPoll?.(this.cycle) ?? this.d.settings.intervalMs;
    this.cycle.appended = false;
    this.cycle.requests = 0;
    if (period !== this.periodMs) {
      this.periodMs = period;
      this.planning = this.planningSettings();
    }
    if (this.stopping) return Promise.resolve();
    // The stop signal serves the pauses too: wake() ends them through the timer without
    // aborting it (a controller of its own per model was a tenth of the heap at 10,000 models).
    // Not an async function: its frame would wait out every pause, for each of 10,000 models.
    this.pauseStartedAt = this.d.clock.now();
    this.woken = false;
    this.pausing = true;
    return this.pause(jittered(period, this.d.settings.jitter)).then(this.afterPause);
  }

  /** After a pause between polls: if it was woken to hurry, the rest of the shorter period, and the next cycle is planned with it. */
  private readonly afterPause = (): Promise<void> | undefined => {
    this.pausing = false;
    if (!this.woken || this.stopping) return undefined;
    this.periodMs = this.d.settings.minIntervalMs ?? this.d.settings.intervalMs;
    this.planning = this.planningSettings();
    const rest = this.wakeWithinMs - (this.d.clock.now() - this.pauseStartedAt);
    return rest > 0 ? this.pause(rest) : undefined;
  };

  private pause(ms: number): Promise<void> {
    return this.timer.sleep(ms, this.stopController.signal);
  }

  /**
   * Pauses polling of this model after a 1 ms window still came back over the size limit,
   * until the limit changes (or, as a last resort, for the longest timer: about 24 days).
   */
  private async pauseOversized(err: ApiResponseTooLargeError): Promise<void> {
    this.health.oversized(err.code, this.windowEvents.oversized(err));
    const resume = new AbortController();
    this.resumeOversized = () => resume.abort();
    await sleep(2 ** 31 - 1, AbortSignal.any([this.stopController.signal, resume.signal]));
    this.resumeOversized = undefined;
  }
}
