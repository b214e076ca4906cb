//! `settle: auto`: one model's settle and first re-read age, following how late its entries
//! become visible (ingest-delay.ts). The settle covers most entries, so a fresh read finds
//! them; the first re-read comes soon after the slowest, so the few a fresh read misses
//! are delivered within seconds rather than at the configured age.
import { DelayEstimator } from './ingest-delay.js';
import { ReadLog } from './read-log.js';

/** What `settle: auto` works with (milliseconds). */
export interface AutoSettleSettings {
  /** `auto`, or a fixed settle: then only the delays are measured. */
  settle: number | 'auto';
  /** The settle until enough entries were seen. */
  fallbackSettleMs: number;
  /** The configured first re-read age when it is below the lookback; undefined when none. */
  firstAgeMs: number | undefined;
  lookbackMs: number;
  minIntervalMs: number;
}

/** The rules of `settle: auto`. */
export const AUTO_SETTLE = {
  /** Share of entries the settle should let a fresh read find. */
  settleShare: 0.98,
  /** Share of entries visible by the time the first re-read comes (before its margin). */
  earlyShare: 0.999,
  /** The first re-read comes at this multiple of the `earlyShare` delay, at least. */
  earlyMargin: 1.5,
  /** Entries to see before the settle follows them. */
  minWeight: 100,
  /** Least time between two changes. */
  updateEveryMs: 2_000,
  /** Largest step down per change (a step up is taken at once). */
  maxDecrease: 0.75,
} as const;

/** The ingest delays of one model, and the settle and first re-read age they call for. */
export class IngestDelays {
  /** Made at the model's first entry: a model that never logs costs no more than this object. */
  private learned: { estimator: DelayEstimator; fresh: ReadLog; early: ReadLog } | undefined;
  private current: number;
  private firstAge: number | undefined;
  private updatedAtMs = Number.NEGATIVE_INFINITY;
  private observedSinceUpdate = false;

  constructor(private readonly s: AutoSettleSettings) {
    this.current = s.settle === 'auto' ? Math.min(s.fallbackSettleMs, capMs(s)) : s.settle;
  }

  /** The estimate of this model's delays (empty until its first entry). */
  get estimator(): DelayEstimator {
    return this.learn().estimator;
  }

  private learn(): { estimator: DelayEstimator; fresh: ReadLog; early: ReadLog } {
    this.learned ??= { estimator: new DelayEstimator(), fresh: new ReadLog(32), early: new ReadLog(32) };
    return this.learned;
  }

  /** The settle to plan with now (ms). */
  get settleMs(): number {
    return this.current;
  }

  /** The first re-read age configured (below the lookback); undefined when none. */
  get configuredFirstAgeMs(): number | undefined {
    return this.s.firstAgeMs;
  }

  /** The first re-read's age now, when it moved below its configured age; else undefined. */
  get firstAgeMs(): number | undefined {
    return this.firstAge;
  }

  /**
   * Logs a completed read of `[fromMs, toMs]` whose first request was sent at `sentAtMs`:
   * a fresh read, or a re-read at the first age (`early`). Later reads that find entries
   * these did not return learn from it.
   */
  noteRead(kind: 'fresh' | 'early', fromMs: number, toMs: number, sentAtMs: number): void {
    // Before the model's first entry there is nothing a bound could be told to.
    if (!this.learned) return;
    const log = kind === 'fresh' ? this.learned.fresh : this.learned.early;
    log.add(fromMs, toMs, sentAtMs);
    log.trimBefore(sentAtMs - this.s.lookbackMs - 60_000);
  }

  /**
   * Learns from the entries a page added (their exact times, the first `n` of `timesNs`),
   * received at `receivedAtMs`. `onLate` is told, for each entry that an earlier read of
   * its span did not return, how long after the entry's time that read was. At most 64
   * entries of a page are looked at, each standing for its share of the page.
   */
  observe(timesNs: BigInt64Array, n: number, receivedAtMs: number, onLate?: (lowerMs: number) => void): void {
    if (n <= 0) return;
    const { estimator, fresh, early } = this.learn();
    const step = Math.max(1, Math.ceil(n / 64));
    for (let i = 0; i < n; i += step) {
      const weight = Math.min(step, n - i);
      const tMs = Number(timesNs[i]! / 1_000n) / 1_000;
      const a = fresh.missedFor(tMs);
      const b = early.missedFor(tMs);
      const lower = a === undefined ? b : b === undefined ? a : Math.max(a, b);
      const upper = Math.max(0, receivedAtMs - tMs);
      estimator.observe(lower, upper, weight);
      if (lower !== undefined && onLate) for (let k = 0; k < weight; k++) onLate(Math.max(0, lower));
    }
    this.observedSinceUpdate = true;
  }

  /** Follows the estimate (at most every 2 s); returns whether the settle or the first age changed. */
  update(nowMs: number): boolean {
    const s = this.s;
    if (s.settle !== 'auto' || !this.observedSinceUpdate || nowMs - this.updatedAtMs < AUTO_SETTLE.updateEveryMs) return false;
    this.updatedAtMs = nowMs;
    this.observedSinceUpdate = false;
    const before = [this.current, this.firstAge];
    const est = this.learned?.estimator;
    if (!est || est.weight < AUTO_SETTLE.minWeight) return false;
    const target = Math.min(est.quantile(AUTO_SETTLE.settleShare), capMs(s));
    const next = target >= this.current ? target : Math.max(target, this.current * AUTO_SETTLE.maxDecrease);
    this.current = Math.round(next / 10) * 10;
    if (s.firstAgeMs !== undefined) {
      const early = Math.max(
        AUTO_SETTLE.earlyMargin * est.quantile(AUTO_SETTLE.earlyShare),
        2 * this.current,
        this.current + Math.max(2_000, 2 * s.minIntervalMs),
      );
      this.firstAge = early < s.firstAgeMs ? Math.round(early / 100) * 100 : undefined;
    }
    return before[0] !== this.current || before[1] !== this.firstAge;
  }
}

/** The highest settle `auto` may choose: half the first re-read age (or of the lookback without one). */
export function capMs(s: Pick<AutoSettleSettings, 'firstAgeMs' | 'lookbackMs'>): number {
  return (s.firstAgeMs ?? s.lookbackMs) / 2;
}
