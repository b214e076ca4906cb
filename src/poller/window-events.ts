//! What a model's poller does when a window fetch meets a misbehaving service, and what it
//! remembers of it for `/status`: a window cut short (a cap or an oversized page) is
//! recorded shorter, with the planner state of the shorter window, to be fetched again
//! from its start; a token cycle or an abandoned window is counted and logged. After a cut,
//! the next windows are planned no longer than the span that was cut to, twice as long
//! with each window read to its end, so that a model does not pay for every halving again
//! with each window. A window cut short holds entries not read yet: the next windows are
//! planned as if one had been seen there, so that none starts back before the cut.
import type { Logger } from 'pino';
import type { ApiResponseTooLargeError } from '../api/errors.js';
import type { Checkpoint, StateStore, WindowStart } from '../journal/store.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Clock } from '../time/clock.js';
import { planStateAfterPiece, planWindows, type PlannedWindow, type PlannerSettings } from './planner.js';
import { MIN_CAPPED_SPAN_MS, MIN_OVERSIZED_SPAN_MS, shortenedWindow, type SplitReason } from './window-guard.js';

/** A window completed as read although a cap stopped its fetch. */
export interface AbandonedWindow {
  fromMs: number;
  toMs: number;
  reason: 'max_pages' | 'max_duration';
  /** Pages read before the cap. */
  pages: number;
  /** When (epoch ms). */
  atMs: number;
}

/** What {@link WindowEvents} needs from the poller. */
export interface WindowEventsDeps {
  modelId: string;
  store: StateStore;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
  /** The settings the poller plans with now (they change as the model's settle is learned). */
  settings(): PlannerSettings;
}

type Span = { fromMs: number; toMs: number };

const iso = (ms: number): string => new Date(ms).toISOString();

/** One model's window splits, token cycles and abandoned windows. */
export class WindowEvents {
  /** Abandoned windows kept for status. */
  static readonly KEEP = 5;
  /** Window fetches cut short and started again. */
  splits = 0;
  /** The last {@link WindowEvents.KEEP} abandoned windows, oldest first. */
  readonly abandoned: AbandonedWindow[] = [];

  /** Longest span of the next window while windows have to be cut (undefined: the planner's). */
  private spanCapMs: number | undefined;
  /** The end (exact ns) of the latest window cut short: it holds entries not read yet. */
  private unreadUpToNs: bigint | undefined;

  constructor(private readonly d: WindowEventsDeps) {}

  /**
   * The window to fetch next: the planner's first, cut to the current span cap if it is
   * longer (its planner state then covers the shorter window only). The model is planned
   * as having seen an entry at the end of the latest window cut short: a model that seems
   * quiet has its re-reads folded into its fresh read, from the oldest frontier on, and
   * that window would ask again for the span that was cut off (an oversized page, fetched
   * again after every piece read).
   */
  next(cp: Checkpoint, nowMs: number): PlannedWindow | undefined {
    const unread = this.unreadUpToNs;
    const seen = unread === undefined || (cp.lastEntryNs !== undefined && cp.lastEntryNs >= unread) ? cp : { ...cp, lastEntryNs: unread };
    const planned = planWindows(seen, nowMs, this.d.settings())[0];
    const cap = this.spanCapMs;
    if (!planned || cap === undefined || planned.toMs - planned.fromMs <= cap) return planned;
    const piece = { fromMs: planned.fromMs, toMs: planned.fromMs + cap };
    return { ...planned, ...piece, planStateAfter: planStateAfterPiece(cp, piece, nowMs, this.d.settings()) };
  }

  /** A window was read to its end without reaching a cap: the next one may be twice as long. */
  completed(): void {
    if (this.spanCapMs === undefined) return;
    this.spanCapMs *= 2;
    if (this.spanCapMs >= this.d.settings().maxWindowMs) this.spanCapMs = undefined;
  }

  /**
   * Cuts the window in progress to its first half (not under the reason's shortest span)
   * and records it to be fetched again from its start, with a new fetch id; the rest is
   * read by the next window. `begin`: the window is not recorded yet. Returns the new
   * checkpoint, or undefined when the window is already that short.
   */
  shorten(window: Span, begin: WindowStart | undefined, reason: SplitReason, details: Record<string, unknown>): Checkpoint | undefined {
    const { store, modelId, metrics, logger, clock, settings } = this.d;
    const cut = shortenedWindow(window, reason === 'too_large' ? MIN_OVERSIZED_SPAN_MS : MIN_CAPPED_SPAN_MS);
    if (!cut) return undefined;
    // From the state before this window: its planned state covered the whole window.
    const planState = planStateAfterPiece(store.getCheckpoint(modelId)!, cut, clock.now(), settings());
    const cp = begin ? store.beginWindow(modelId, cut.fromMs, cut.toMs, planState) : store.shortenWindow(modelId, cut.toMs, planState);
    metrics.windowSplits.inc({ model: modelId, reason });
    this.splits++;
    this.spanCapMs = cut.toMs - cut.fromMs;
    const end = BigInt(window.toMs) * 1_000_000n;
    if (this.unreadUpToNs === undefined || end > this.unreadUpToNs) this.unreadUpToNs = end;
    const what = reason === 'too_large' ? 'a page was larger than api.max_response_bytes' : `the window fetch reached poll.window_limits.${reason}`;
    logger.warn(
      { model: modelId, reason, ...details, from: iso(window.fromMs), to: iso(window.toMs), newTo: iso(cut.toMs) },
      `${what}; fetching a window of half the span again from its start (the rest comes with the next window)`,
    );
    return cp;
  }

  /** A page's next_token had been followed before in the window: the page was the last. */
  cycle(window: Span, length: number, pages: number): void {
    const { modelId, metrics, logger } = this.d;
    metrics.tokenCycles.inc({ model: modelId });
    if (length === 1) metrics.tokenLoops.inc({ model: modelId });
    logger.warn(
      { model: modelId, cycleLength: length, pages, from: iso(window.fromMs), to: iso(window.toMs) },
      'the service returned a next_token already followed in this window; the page that returned it is taken as the last one',
    );
  }

  /** A window of the shortest span reached a cap: its last page read was committed as its last page. */
  abandon(window: Span, reason: 'max_pages' | 'max_duration', pages: number): void {
    const { modelId, metrics, logger, clock } = this.d;
    metrics.windowsAbandoned.inc({ reason });
    this.abandoned.push({ fromMs: window.fromMs, toMs: window.toMs, reason, pages, atMs: clock.now() });
    if (this.abandoned.length > WindowEvents.KEEP) this.abandoned.shift();
    logger.error(
      { model: modelId, reason, pages, from: iso(window.fromMs), to: iso(window.toMs) },
      `a window of the shortest span (1s) still reached poll.window_limits.${reason}; it is completed as read, and entries on the pages not read are skipped`,
    );
  }

  /**
   * A 1 ms window still came back over `api.max_response_bytes`: counts it (the model is
   * down) and logs one error line. Returns the message, for status.
   */
  oversized(err: ApiResponseTooLargeError): string {
    const { modelId, metrics, logger, store } = this.d;
    const window = store.getCheckpoint(modelId)?.window;
    metrics.pollErrors.inc({ model: modelId, code: err.code });
    metrics.initModel(modelId).up.set(0);
    const message =
      `an entry is larger than api.max_response_bytes (${err.limitBytes} bytes): the response for a 1 ms window was ${err.size}; ` +
      'polling of this model is paused until api.max_response_bytes is raised (then reload with SIGHUP)';
    logger.error({ model: modelId, code: err.code, limitBytes: err.limitBytes, responseBytes: err.responseBytes, ...(window ? { from: iso(window.fromMs), to: iso(window.toMs) } : {}) }, message);
    return message;
  }
}
