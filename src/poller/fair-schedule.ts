//! Shares the request budget (`poll.concurrency`, `poll.rate_limit`) fairly among models.
//! All requests wait in one p-queue; each gets a priority that falls with the number of
//! requests its model sent within the last poll interval. A model due for its poll thus
//! goes ahead of every model already served in this interval, however many pages those
//! others still want (a service paging without end, a long catch-up): every due model gets
//! one request per interval before any model gets a second.
import type PQueue from 'p-queue';

/** Adds requests to a queue with per-model fair priorities. */
export class FairSchedule {
  /** Per model: when its recent requests were added (monotonic ms), oldest first. */
  private readonly recent = new Map<string, number[]>();

  /**
   * @param queue the shared queue (its concurrency and rate limit apply to all models)
   * @param intervalMs how far back a model's requests count against it: the poll interval
   */
  constructor(
    private readonly queue: PQueue,
    private readonly intervalMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `fn` under the queue's limits, behind the requests of models that sent fewer lately. */
  add<T>(modelId: string, fn: () => Promise<T>): Promise<T> {
    return this.queue.add(fn, { priority: -this.note(modelId) }) as Promise<T>;
  }

  /** Forgets a model (removed by a reload). */
  forget(modelId: string): void {
    this.recent.delete(modelId);
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
    if (old > 0) times.splice(0, old);
    const before = times.length;
    times.push(now);
    return before;
  }
}
