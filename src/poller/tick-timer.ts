//! The timer of the poll scheduler (poll-scheduler.ts). Sleeps end on a grid, so the models
//! due in the same grid step are polled together: a burst of requests a few times a second
//! costs far less CPU (on both ends of the connection) than the same requests spread evenly,
//! one wake-up each.

/** The sleeps of the poll scheduler: the daemon's {@link TickTimer}, or virtual time in tests. */
export interface PollTimer {
  /** Resolves after `ms`, or early (without error) when `signal` aborts or {@link PollTimer.wake} is called with it. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Ends the sleeps of `signal` now, without aborting it (the scheduler keeps one signal for its life). */
  wake(signal: AbortSignal): void;
}

/** A sleep waiting for its grid point. */
interface Sleeper {
  readonly resolve: () => void;
  readonly tick: number;
  readonly signal: AbortSignal | undefined;
}

/** Groups sleeps into wake-ups on a grid of `gridMs` (on the monotonic clock). */
export class TickTimer implements PollTimer {
  private readonly due = new Map<number, Set<Sleeper>>();
  /**
   * The sleeps of each signal, with one abort listener per signal for its lifetime (a signal
   * serves sleep after sleep), and what `wake` ends.
   */
  private readonly bySignal = new WeakMap<AbortSignal, Set<Sleeper>>();
  private timer: NodeJS.Timeout | undefined;
  private armedTick = Number.POSITIVE_INFINITY;

  /** @param gridMs grid step; a sleep ends at the first grid point at or after its own end. */
  constructor(
    private readonly gridMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(gridMs > 0)) throw new RangeError(`gridMs must be positive, got ${gridMs}`);
  }

  /** Resolves at least `ms` from now, at most one grid step later; early (without error) when `signal` aborts or is woken. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const tick = Math.ceil((this.now() + Math.max(0, ms)) / this.gridMs);
      const sleeper: Sleeper = { resolve, tick, signal };
      let sleepers = this.due.get(tick);
      if (!sleepers) {
        sleepers = new Set();
        this.due.set(tick, sleepers);
      }
      sleepers.add(sleeper);
      if (signal) {
        let mine = this.bySignal.get(signal);
        if (!mine) {
          mine = new Set();
          this.bySignal.set(signal, mine);
          signal.addEventListener('abort', () => this.aborted(signal), { once: true });
        }
        mine.add(sleeper);
      }
      this.arm(tick);
    });
  }

  /** Sleepers waiting (for tests). */
  get pending(): number {
    let n = 0;
    for (const s of this.due.values()) n += s.size;
    return n;
  }

  /** Ends the sleeps of `signal` now, without aborting it. */
  wake(signal: AbortSignal): void {
    const mine = this.bySignal.get(signal);
    if (!mine || mine.size === 0) return;
    const woken = [...mine];
    mine.clear();
    this.end(woken);
  }

  /** `signal` aborted: ends its sleeps and forgets it. */
  private aborted(signal: AbortSignal): void {
    const mine = this.bySignal.get(signal);
    if (!mine) return;
    this.bySignal.delete(signal);
    this.end(mine);
  }

  private end(sleepers: Iterable<Sleeper>): void {
    for (const sleeper of sleepers) {
      const set = this.due.get(sleeper.tick);
      if (set) {
        set.delete(sleeper);
        if (set.size === 0) this.due.delete(sleeper.tick);
      }
      sleeper.resolve();
    }
  }

  private arm(tick: number): void {
    if (tick >= this.armedTick && this.timer) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedTick = tick;
    this.timer = setTimeout(() => this.fire(), Math.max(0, tick * this.gridMs - this.now()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedTick = Number.POSITIVE_INFINITY;
    // Timers may fire up to a millisecond early on the monotonic clock.
    const reached = Math.floor((this.now() + 1) / this.gridMs);
    let next = Number.POSITIVE_INFINITY;
    const woken: Sleeper[] = [];
    for (const [tick, sleepers] of this.due) {
      if (tick <= reached) {
        this.due.delete(tick);
        for (const sleeper of sleepers) woken.push(sleeper);
      } else if (tick < next) {
        next = tick;
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    for (const sleeper of woken) {
      if (sleeper.signal) this.bySignal.get(sleeper.signal)?.delete(sleeper);
      sleeper.resolve();
    }
  }
}

/** The grid for a poll interval: a tenth of it, at most a second. */
export function pollGridMs(intervalMs: number): number {
  return Math.min(1_000, Math.max(1, Math.floor(intervalMs / 10)));
}
