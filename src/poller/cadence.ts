//! How often each model is polled, within the request budget (`poll.rate_limit`,
//! `poll.concurrency`). A model whose last poll returned new entries, or that was asked to
//! hurry, is polled again after `min_interval`; a quiet one backs off, doubling, to
//! `interval`. What polling every model once per interval costs comes first: active
//! models share what is left, so their period stretches beyond `min_interval` when the
//! budget is short, and quiet models keep their one poll per interval as long as the budget
//! covers it at all.

/** The budget and the bounds of the poll period (milliseconds). */
export interface CadenceSettings {
  intervalMs: number;
  minIntervalMs: number;
  /** Requests per second allowed across all models; undefined for no limit. */
  ratePerSec: number | undefined;
  /** Requests in flight at once across all models. */
  concurrency: number;
}

/** Share of the budget polling may plan to use (the rest absorbs bursts: pages, catch-ups). */
const USABLE = 0.9;

interface ModelState {
  busy: boolean;
  delayMs: number;
  /** Requests per poll cycle of this model (moving average). */
  requests: number;
  hurryUntilMs: number;
}

/** What the budget allows: every figure a warning or a gauge needs. */
export interface BudgetFigures {
  models: number;
  /** Requests per second polling every model once per interval takes. */
  requiredPerSec: number;
  /** Requests per second the budget allows (rate limit, or concurrency over the request latency). */
  capacityPerSec: number;
  /** requiredPerSec ÷ capacityPerSec: above 1 the models cannot all be polled every interval. */
  utilization: number;
  /** How often each model can be polled when the budget does not cover the interval (ms). */
  periodMs: number;
}

/** The poll periods of all models of a daemon. */
export class PollCadence {
  private readonly models = new Map<string, ModelState>();
  private busyRequests = 0;
  private busyCount = 0;
  /** Mean latency of a request (ms), measured; undefined until one finished. */
  private latencyMs: number | undefined;

  constructor(private readonly s: CadenceSettings) {}

  /** Starts tracking a model (quiet until its first poll says otherwise). */
  add(modelId: string): void {
    if (!this.models.has(modelId)) this.models.set(modelId, { busy: false, delayMs: this.s.intervalMs, requests: 1, hurryUntilMs: Number.NEGATIVE_INFINITY });
  }

  /** Forgets a model (removed by a reload). */
  forget(modelId: string): void {
    const m = this.models.get(modelId);
    if (m?.busy) this.setBusy(m, false);
    this.models.delete(modelId);
  }

  /**
   * Asks that `modelId` be polled every `min_interval` until `untilMs` (the daemon clock's
   * epoch ms), whatever its polls return; a later call may extend the time, never shorten
   * it. Returns false for a model not polled.
   */
  hurry(modelId: string, untilMs: number): boolean {
    const m = this.models.get(modelId);
    if (!m) return false;
    m.hurryUntilMs = Math.max(m.hurryUntilMs, untilMs);
    return true;
  }

  /** Whether `modelId` was asked to hurry and that time has not passed. */
  hurried(modelId: string, nowMs: number): boolean {
    return (this.models.get(modelId)?.hurryUntilMs ?? Number.NEGATIVE_INFINITY) > nowMs;
  }

  /** A request took `ms` (measured from its start, not its wait in the queue). */
  noteLatency(ms: number): void {
    this.latencyMs = this.latencyMs === undefined ? ms : this.latencyMs * 0.95 + ms * 0.05;
  }

  /**
   * A poll cycle of `modelId` ended (its fresh window and any re-read due with it), having
   * appended entries or not and sent `requests` requests: returns how long to wait before
   * the next one (before jitter).
   */
  next(modelId: string, cycle: { appended: boolean; requests: number }, nowMs: number): number {
    this.add(modelId);
    const m = this.models.get(modelId)!;
    const busy = cycle.appended || m.hurryUntilMs > nowMs;
    if (m.busy) this.busyRequests -= m.requests;
    m.requests = m.requests * 0.7 + Math.max(1, cycle.requests) * 0.3;
    if (m.busy) this.busyRequests += m.requests;
    this.setBusy(m, busy);
    m.delayMs = busy ? this.activePeriodMs() : Math.min(this.s.intervalMs, Math.max(m.delayMs, this.s.minIntervalMs) * 2);
    return m.delayMs;
  }

  /** The period of active models now: `min_interval`, or longer when the budget is short. */
  activePeriodMs(): number {
    const { intervalMs, minIntervalMs } = this.s;
    if (this.busyCount === 0) return minIntervalMs;
    const usable = USABLE * this.capacityPerSec();
    if (!Number.isFinite(usable)) return minIntervalMs;
    const quiet = (this.models.size - this.busyCount) / (intervalMs / 1000);
    const spare = usable - quiet;
    if (spare <= 0) return intervalMs;
    return Math.min(intervalMs, Math.max(minIntervalMs, (this.busyRequests / spare) * 1000));
  }

  /** The budget against polling every model once per interval. */
  figures(): BudgetFigures {
    const requiredPerSec = this.models.size / (this.s.intervalMs / 1000);
    const capacityPerSec = this.capacityPerSec();
    const utilization = Number.isFinite(capacityPerSec) ? requiredPerSec / capacityPerSec : 0;
    return { models: this.models.size, requiredPerSec, capacityPerSec, utilization, periodMs: Math.max(this.s.intervalMs, this.s.intervalMs * utilization) };
  }

  /** Requests per second the budget allows: the rate limit, and the concurrency over the latency seen. */
  capacityPerSec(): number {
    const byRate = this.s.ratePerSec ?? Number.POSITIVE_INFINITY;
    const byConcurrency = this.latencyMs === undefined ? Number.POSITIVE_INFINITY : this.s.concurrency / (Math.max(1, this.latencyMs) / 1000);
    return Math.min(byRate, byConcurrency);
  }

  /** Active models now (for tests and status). */
  get active(): number {
    return this.busyCount;
  }

  private setBusy(m: ModelState, busy: boolean): void {
    if (m.busy === busy) return;
    m.busy = busy;
    this.busyCount += busy ? 1 : -1;
    this.busyRequests += busy ? m.requests : -m.requests;
  }
}

/** The warning to log when the budget cannot poll every model once per interval; undefined when it can. */
export function budgetShortfall(f: BudgetFigures, intervalMs: number): { message: string; fields: Record<string, unknown> } | undefined {
  if (!(f.utilization > 1)) return undefined;
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    message: `the request budget cannot poll every model once per poll.interval: raise poll.rate_limit (or poll.concurrency), or lengthen poll.interval`,
    fields: {
      models: f.models,
      intervalSeconds: intervalMs / 1000,
      requiredPerSecond: round(f.requiredPerSec),
      budgetPerSecond: round(f.capacityPerSec),
      utilization: Math.round(f.utilization * 100) / 100,
      eachModelEverySeconds: round(f.periodMs / 1000),
    },
  };
}
