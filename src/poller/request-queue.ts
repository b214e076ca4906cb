//! The queue every request to the service waits in: at most `concurrency` running, at most
//! `intervalCap` started per `intervalMs`, the highest priority first (in order of arrival
//! among equals). It does what the daemon used p-queue for, with one small object per
//! request: p-queue made an id, an options copy, a running-task record, a context binding and
//! several events per task, which at 1,000 requests a second was a tenth of all allocation.

/** What {@link FairSchedule} needs of a queue (p-queue has it too). */
export interface PriorityQueueLike {
  add<T>(fn: () => Promise<T>, options: { priority: number }): Promise<T>;
}

/** Options of {@link RequestQueue}. */
export interface RequestQueueOptions {
  /** Requests running at once (at least 1). */
  concurrency: number;
  /** Requests started per `intervalMs` at most; undefined: no rate limit. */
  intervalCap?: number | undefined;
  intervalMs?: number | undefined;
  /** Monotonic ms (default `performance.now`). */
  now?: () => number;
}

interface Task {
  fn: () => Promise<unknown>;
  priority: number;
  seq: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** A priority queue under a concurrency and a rate limit. */
export class RequestQueue implements PriorityQueueLike {
  /** A binary heap: highest priority, then lowest seq, at the top. */
  private heap: Task[] = [];
  private seq = 0;
  private running = 0;
  private windowEndMs = Number.NEGATIVE_INFINITY;
  private startedInWindow = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly concurrency: number;
  private readonly cap: number | undefined;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly finished = (): void => {
    this.running--;
    this.drain();
  };

  constructor(options: RequestQueueOptions) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency));
    const limited = options.intervalCap !== undefined && options.intervalMs !== undefined && Number.isFinite(options.intervalCap) && options.intervalMs > 0;
    this.cap = limited ? Math.max(1, Math.floor(options.intervalCap!)) : undefined;
    this.intervalMs = options.intervalMs ?? 0;
    this.now = options.now ?? (() => performance.now());
  }

  /** Requests waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Requests running. */
  get pending(): number {
    return this.running;
  }

  /** Runs `fn` when its turn comes; settles as it does. */
  add<T>(fn: () => Promise<T>, options: { priority?: number } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.push({ fn, priority: options.priority ?? 0, seq: this.seq++, resolve: resolve as (v: unknown) => void, reject });
      this.drain();
    });
  }

  /** Drops the requests still waiting (their promises never settle); running ones finish. */
  clear(): void {
    this.heap = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private drain(): void {
    while (this.running < this.concurrency && this.heap.length > 0) {
      if (this.cap !== undefined) {
        const now = this.now();
        if (now >= this.windowEndMs) {
          this.windowEndMs = now + this.intervalMs;
          this.startedInWindow = 0;
        }
        if (this.startedInWindow >= this.cap) {
          this.timer ??= setTimeout(() => {
            this.timer = undefined;
            this.drain();
          }, Math.max(1, Math.ceil(this.windowEndMs - now)));
          return;
        }
        this.startedInWindow++;
      }
      const task = this.pop();
      this.running++;
      let p: Promise<unknown>;
      try {
        p = task.fn();
      } catch (err) {
        p = Promise.reject(err);
      }
      p.then(task.resolve, task.reject).then(this.finished, this.finished);
    }
  }

  private before(a: Task, b: Task): boolean {
    return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
  }

  private push(task: Task): void {
    const h = this.heap;
    let i = h.length;
    h.push(task);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(task, h[parent]!)) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = task;
  }

  private pop(): Task {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    const n = h.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && this.before(h[r]!, h[l]!) ? r : l;
        if (!this.before(h[c]!, last)) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}
