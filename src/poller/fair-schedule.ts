//! Shares the request budget (`poll.concurrency`, `poll.rate_limit`) among models. All
//! requests wait in one priority queue (p-queue), in three classes: first, the request of a
//! model that sent none within the last poll interval (every model gets one request per
//! interval before any model gets a further one); then fresh reads of models polled more often
//! (active models, for freshness); then re-reads. Within a class, a request's priority falls
//! with the number of requests its model sent within the interval, so a service paging
//! without end, or a long catch-up, cannot hold the others back.
import PQueue from 'p-queue';
import type { RateLimit } from '../config/units.js';

/**
 * The queue every request to the service waits in: at most `concurrency` running, at most
 * `rate.count` started per `rate.perMs` (none when `rate` is null), the highest priority first
 * and in order of arrival among equals.
 */
export function requestQueue(concurrency: number, rate: RateLimit | null): PQueue {
  return new PQueue({ concurrency, ...(rate ? { intervalCap: rate.count, interval: rate.perMs } : {}) });
}

/** What a request reads: the newest span of a model (`fresh`), or an older span again (`reread`). */
export type RequestKind = 'fresh' | 'reread';

const FLOOR = 3_000_000;
const FRESH = 2_000_000;
const REREAD = 1_000_000;

/** Requests sent and time spent in requests, per second, over the last interval. */
class UsageMeter {
  /** By second (epoch ms ÷ 1000), the seconds of the last interval only. */
  private readonly bySecond = new Map<number, { started: number; busyMs: number }>();

  constructor(private readonly seconds: number) {}

  add(nowMs: number, started: number, busyMs: number): void {
    const second = Math.floor(nowMs / 1000);
    let usage = this.bySecond.get(second);
    if (!usage) {
      this.forgetBefore(second);
      this.bySecond.set(second, (usage = { started: 0, busyMs: 0 }));
    }
    usage.started += started;
    usage.busyMs += busyMs;
  }

  /** Requests per second and mean requests in flight, over the last `seconds` seconds. */
  rates(nowMs: number): { requestsPerSec: number; inFlight: number } {
    this.forgetBefore(Math.floor(nowMs / 1000));
    let n = 0;
    let busy = 0;
    for (const usage of this.bySecond.values()) {
      n += usage.started;
      busy += usage.busyMs;
    }
    return { requestsPerSec: n / this.seconds, inFlight: busy / (this.seconds * 1000) };
  }

  /** Drops the seconds that are out of the interval ending with `second`. */
  private forgetBefore(second: number): void {
    for (const s of this.bySecond.keys()) if (s <= second - this.seconds) this.bySecond.delete(s);
  }
}

/** Adds requests to a queue with per-model priorities. */
export class FairSchedule {
  /** Per model: when its recent requests were added (monotonic ms), oldest first. */
  private readonly recent = new Map<string, number[]>();
  private readonly usage: UsageMeter;

  /**
   * @param queue the shared queue (its concurrency and rate limit apply to all models)
   * @param intervalMs how far back a model's requests count against it: the poll interval
   * @param onLatency told how long each request ran (from its start, not its wait in the queue)
   */
  constructor(
    private readonly queue: PQueue,
    private readonly intervalMs: number,
    private readonly now: () => number = () => performance.now(),
    private readonly onLatency?: (ms: number) => void,
  ) {
    this.usage = new UsageMeter(Math.max(1, Math.ceil(intervalMs / 1000)));
  }

  /** Runs `fn` under the queue's limits, in its class, behind the requests of models that sent fewer lately. */
  add<T>(modelId: string, fn: () => Promise<T>, kind: RequestKind = 'fresh'): Promise<T> {
    const before = this.note(modelId);
    const priority = before === 0 ? FLOOR : (kind === 'fresh' ? FRESH : REREAD) - before;
    return this.queue.add(() => this.timed(fn), { priority });
  }

  /** Forgets a model (removed by a reload). */
  forget(modelId: string): void {
    this.recent.delete(modelId);
  }

  /** Requests sent per second and mean requests in flight, over the last interval. */
  rates(): { requestsPerSec: number; inFlight: number } {
    return this.usage.rates(this.now());
  }

  private async timed<T>(fn: () => Promise<T>): Promise<T> {
    const start = this.now();
    this.usage.add(start, 1, 0);
    try {
      return await fn();
    } finally {
      const end = this.now();
      this.usage.add(end, 0, end - start);
      this.onLatency?.(end - start);
    }
  }

  /** Records a request of `modelId`; returns how many it sent before it within the interval. */
  private note(modelId: string): number {
    const now = this.now();
    let times = this.recent.get(modelId);
    if (!times) {
      times = [];
      this.recent.set(modelId, times);
    }
    let old = 0;
    while (old < times.length && times[old]! <= now - this.intervalMs) old++;
    // In place: a quiet model's one time is overwritten. Emptying the array and pushing again
    // gave it a new backing store at every poll, kept until the next one (and so promoted).
    const before = times.length - old;
    if (old > 0 && before > 0) times.copyWithin(0, old);
    times[before] = now;
    times.length = before + 1;
    return before;
  }
}
