//! Fetches one window of a model: each page with the previous next_token, and every page
//! (entries, dedupe counts, token) committed in one transaction. A crash resumes from the
//! saved token; a rejected token restarts the window, and dedupe absorbs the repeat.
//! A service that misbehaves is bounded per window fetch (window-guard.ts, window-events.ts):
//! a token already followed ends the window, caps and oversized pages shorten it.
import type { Logger } from 'pino';
import type { ApiClient, LogsPage } from '../api/types.js';
import { ApiClientError, ApiResponseTooLargeError } from '../api/errors.js';
import type { Clock } from '../time/clock.js';
import { preparePage } from './prepare.js';
import type { Checkpoint, PageCommit, PageToCommit, StateStore, WindowStart } from '../journal/store.js';
import type { Metrics, ModelCounters } from '../telemetry/metrics.js';
import type { PlannedWindow } from './planner.js';
import type { Abandoner } from './abandon.js';
import { MIN_CAPPED_SPAN_MS, WindowGuard, shortenedWindow, type WindowLimits } from './window-guard.js';
import type { WindowEvents } from './window-events.js';
import type { IngestDelays } from './auto-settle.js';
import type { ModelHealth } from './model-health.js';
import type { RequestKind } from './fair-schedule.js';

/** The settings a window fetch reads. */
export interface WindowFetchSettings {
  isLessLogs: boolean | undefined;
  /** Caps of one window fetch. */
  windowLimits: WindowLimits;
}

/** What a window fetch needs from the daemon. */
export interface WindowFetchDeps {
  modelId: string;
  settings: WindowFetchSettings;
  store: StateStore;
  client: ApiClient;
  /** Runs a request under the global concurrency and rate limits; `kind` is what it reads. */
  schedule<T>(fn: () => Promise<T>, kind: RequestKind): Promise<T>;
  /** Undefined when the journal has room for another page now, else resolves when it has (backpressure). */
  waitForRoom(signal: AbortSignal): Promise<void> | undefined;
  /** Called after each committed page that appended entries. */
  onAppend(): void;
  /** Called when a window was fetched to its end after appending entries (sinks need not wait for more). */
  onWindowDone?(): void;
  clock: Clock;
  /** Shared by the pollers of all models: every line logged names its model (`model`). */
  logger: Logger;
  metrics: Metrics;
  /**
   * Commits a page (default: `store.commitPages` at once); the daemon commits the pages of
   * all models that arrive together in one transaction. Resolves once the page is durable.
   */
  commit?(page: PageToCommit): Promise<PageCommit>;
}

/**
 * What a window fetch works with: the poller's own parts. Built once per poller (the fetch
 * runs about a thousand times a second at 10,000 models), so every field is one that the
 * poller never replaces.
 */
export interface WindowFetchContext {
  d: WindowFetchDeps;
  /** Failures, pauses and the last error. */
  health: ModelHealth;
  /** Windows cut short or abandoned, token cycles: for status output. */
  windowEvents: WindowEvents;
  /** How late this model's entries become visible. */
  delays: IngestDelays;
  /** This model's per-model metrics. */
  counters: ModelCounters;
  /** This poll cycle so far (the poller resets it, never replaces it). */
  cycle: { appended: boolean; requests: number };
  /** Aborted when the poller stops: the page in flight still finishes and commits. */
  stop: AbortSignal;
  /** Stops waiting for a request when `stop` aborts; a page that comes later is dropped ({@link releasePage}). */
  abandon: Abandoner<LogsPage>;
}

/** A page that arrived after its fetch was abandoned: dropped, nothing holds on to it. */
export const releasePage = (): void => undefined;
const ignore = (): void => undefined;

/** How a window fetch ended. */
export type FetchOutcome = { kind: 'done' | 'stopped' | 'shortened' } | { kind: 'failed'; retryInMs: number } | { kind: 'too_large'; error: ApiResponseTooLargeError };

/**
 * Fetches the window of `cp` (the one in progress, or the one `begin` starts) page by page,
 * committing each, until its end, a cut, a failure or a stop.
 */
export async function fetchWindow(ctx: WindowFetchContext, cp: Checkpoint, begin: WindowStart | undefined, planned: PlannedWindow | undefined): Promise<FetchOutcome> {
  const d = ctx.d;
  const { store, modelId, metrics, logger } = d;
  const window = cp.window!;
  let token = window.nextToken;
  let fetchId = cp.fetchId;
  let restarts = 0;
  let pageCount = 0;
  let appendedInWindow = 0;
  let guard = new WindowGuard(window.tokens, d.settings.windowLimits);
  // A window resumed from the checkpoint (after a restart) has no plan here: it counts as a re-read.
  const kind: RequestKind = planned?.kind ?? (cp.watermarkMs === undefined || window.fromMs >= cp.watermarkMs ? 'fresh' : 'reread');
  let sentAtMs: number | undefined;
  const request = (nextToken: string | undefined) => {
    // Stopping aborts the request, its retries and their waits, or its turn in the queue; a page already received still commits.
    const signal = ctx.stop;
    ctx.cycle.requests++;
    const scheduled = d.schedule(() => {
      sentAtMs ??= d.clock.now();
      return d.client.getLogs({ modelId, fromMs: window.fromMs, toMs: window.toMs, isLessLogs: d.settings.isLessLogs, nextToken }, signal);
    }, kind);
    const p = ctx.abandon.wrap(scheduled);
    p.catch(ignore); // handled where it is awaited
    return p;
  };
  // The next page is requested before the current one is committed, so the network and the
  // service work while the commit runs. Pages are still committed strictly in order.
  let prefetched: Promise<LogsPage> | undefined;
  for (;;) {
    // Stopping: a next page already requested is awaited (the abort ends it at once unless it has arrived, and then it commits).
    if (ctx.stop.aborted && !prefetched) return { kind: 'stopped' };
    const room = d.waitForRoom(ctx.stop);
    if (room) {
      const waitStart = performance.now();
      await room;
      guard.exclude(performance.now() - waitStart);
    }
    if (ctx.stop.aborted && !prefetched) return { kind: 'stopped' };
    let page: LogsPage;
    try {
      page = await (prefetched ?? request(token));
    } catch (err) {
      prefetched = undefined;
      if (ctx.stop.aborted) return { kind: 'stopped' }; // aborted by stop(): not a failure
      if (token !== undefined && err instanceof ApiClientError && err.status === 400 && restarts < 3) {
        // The token expired or is unknown (e.g. the service restarted): fetch the window again.
        restarts++;
        metrics.tokenRestarts.inc({ model: modelId });
        logger.warn({ model: modelId, status: err.status, details: err.message }, 'next_token rejected; restarting the window from its start');
        fetchId = begin ? fetchId + 1 : store.restartWindow(modelId).fetchId;
        token = undefined;
        guard = new WindowGuard(undefined, d.settings.windowLimits);
        continue;
      }
      if (err instanceof ApiResponseTooLargeError) {
        // One entry (or one page) too large for the limit: isolate it in ever shorter windows.
        return ctx.windowEvents.shorten(window, begin, 'too_large', { size: err.size, limitBytes: err.limitBytes }) ? { kind: 'shortened' } : { kind: 'too_large', error: err };
      }
      return { kind: 'failed', retryInMs: ctx.health.fetchError(err) };
    }
    prefetched = undefined;
    ctx.health.recovered();
    const verdict = guard.check(page.nextToken);
    // A cap reached on the shortest window: this page is its last (the rest is not read).
    const abandon = verdict.kind === 'limit' && !shortenedWindow(window, MIN_CAPPED_SPAN_MS);
    const end = verdict.kind === 'end' || verdict.kind === 'cycle' || abandon;
    if (verdict.kind === 'follow' && !ctx.stop.aborted) prefetched = request(page.nextToken);
    const prepared = preparePage(page, window.fromMs);
    const next = end ? { end: true as const } : { nextToken: page.nextToken!, ...(verdict.kind === 'follow' ? { tokenHash: verdict.hash } : {}) };
    const toCommitFetchedMs = d.clock.now();
    const toCommit: PageToCommit = { modelId, fetchId, windowFromMs: window.fromMs, entries: prepared, next, fetchedMs: toCommitFetchedMs, begin };
    const commit = d.commit ? await d.commit(toCommit) : store.commitPages([toCommit])[0]!;
    if (commit.invalid) countInvalid(d, commit.invalid);
    begin = undefined;
    const counters = ctx.counters;
    counters.pages.inc();
    counters.entriesFetched.inc(prepared.length);
    if (commit.appended > 0) {
      appendedInWindow += commit.appended;
      counters.entriesNew.inc(commit.appended);
      d.onAppend();
      ctx.cycle.appended ||= kind === 'fresh';
      if (commit.newTimesNs) ctx.delays.observe(commit.newTimesNs, commit.appended, toCommitFetchedMs, (lowerMs) => metrics.ingestDelay.observe({ model: modelId }, lowerMs / 1000));
    }
    counters.duplicates.inc(commit.duplicates);
    if (verdict.kind === 'cycle') ctx.windowEvents.cycle(window, verdict.length, guard.pagesRead);
    if (verdict.kind === 'limit') {
      if (!abandon) {
        ctx.windowEvents.shorten(window, undefined, verdict.reason, { pages: guard.pagesRead, elapsedMs: Math.round(guard.elapsedMs) });
        return { kind: 'shortened' };
      }
      ctx.windowEvents.abandon(window, verdict.reason, guard.pagesRead);
    }
    if (end) {
      if (!abandon) ctx.windowEvents.completed();
      if (sentAtMs !== undefined && (kind === 'fresh' || planned?.first)) ctx.delays.noteRead(kind === 'fresh' ? 'fresh' : 'early', window.fromMs, window.toMs, sentAtMs);
      if (appendedInWindow > 0) d.onWindowDone?.();
      if (logger.isLevelEnabled('debug')) {
        logger.debug({ model: modelId, from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString(), pages: pageCount + 1 }, 'window done');
      }
      return { kind: 'done' };
    }
    pageCount++;
    token = page.nextToken;
  }
}

/** Off-spec entries appended (each copy once, however often it is read): counted and said, per reason. */
function countInvalid(d: WindowFetchDeps, invalid: NonNullable<PageCommit['invalid']>): void {
  for (const [reason, n] of Object.entries(invalid)) d.metrics.entriesInvalid.inc({ model: d.modelId, reason }, n);
  d.logger.warn({ model: d.modelId, reasons: invalid }, 'off-spec entries shipped with their fields as text');
}
