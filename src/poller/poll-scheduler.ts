//! When each model polls: one scheduler for all of them. A model waiting for its next poll is
//! an entry with a due time, not a suspended async function: with thousands of models, an
//! async loop per model kept its frames, promises, closures and listeners alive through every
//! pause (a large share of the heap), and made them again at every poll.
//!
//! The scheduler sleeps on a timer grid until the earliest due time, then starts the cycles
//! due, a few hundred per turn of the event loop. Sleeps end on the grid so that the models
//! due in the same grid step are polled together: a burst of requests a few times a second
//! costs far less CPU (on both ends of the connection) than the same requests spread evenly,
//! one wake-up each. The entries are scanned at each wake-up: a pass over ten thousand due
//! times a few times a second costs less than keeping them ordered.
import { sleep } from '../time/backoff.js';

/** The sleeps of the poll scheduler: {@link gridTimer}, or virtual time in tests. */
export interface PollTimer {
  /** Resolves after `ms`, or early (without error) when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** Sleeps that end at the first point of a grid of `gridMs` (on the monotonic clock) at or after their own end. */
export function gridTimer(gridMs: number): PollTimer {
  if (!(gridMs > 0)) throw new RangeError(`gridMs must be positive, got ${gridMs}`);
  return {
    sleep(ms, signal) {
      const now = performance.now();
      return sleep(Math.ceil((now + Math.max(0, ms)) / gridMs) * gridMs - now, signal);
    },
  };
}

/** The grid for a poll interval: a tenth of it, at most a second. */
export function pollGridMs(intervalMs: number): number {
  return Math.min(1_000, Math.max(1, Math.floor(intervalMs / 10)));
}

/** What the scheduler drives. */
export interface Pollable {
  /**
   * Runs one poll cycle; resolves with the wait before the next one (ms; `Infinity` to wait
   * until moved with {@link ScheduleHandle.dueIn}), or undefined when the model stops.
   * Never rejects.
   */
  cycle(): Promise<number | undefined>;
}

/** A pollable's place in the scheduler. */
export interface ScheduleHandle {
  /** Moves the next cycle to `ms` from now, if it is waiting (not running) and due later. */
  dueIn(ms: number): void;
  /** Leaves the scheduler: no cycle starts any more; resolves when the one running (if any) ends. */
  remove(): Promise<void>;
}

interface Entry extends ScheduleHandle {
  readonly p: Pollable;
  /** Due time (the scheduler's clock) while waiting. */
  at: number;
  running: Promise<void> | undefined;
  removed: boolean;
}

/** The longest sleep of the loop. */
const IDLE_MS = 60_000;
/** Cycles started per turn of the event loop (the rest wait for the next turn). */
const TURN = 256;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The due times of all pollables, and the one loop that starts their cycles. */
export class PollScheduler {
  /** The entries waiting for their cycle (not running, not removed). */
  private readonly waiting = new Set<Entry>();
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private inFlight = 0;
  /** Ends the loop's sleep early: aborted when something comes due before the sleep's end. */
  private wakeUp = new AbortController();
  private sleepsUntil = Number.NEGATIVE_INFINITY;

  /**
   * @param timer the sleeps of the loop (the daemon's grid, or virtual time in tests)
   * @param now monotonic ms of the timer's clock
   */
  constructor(
    private readonly timer: PollTimer,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Cycles running now. */
  get running(): number {
    return this.inFlight;
  }

  /** Adds a pollable whose first cycle is due at once. */
  add(p: Pollable): ScheduleHandle {
    const entry: Entry = {
      p,
      at: this.now(),
      running: undefined,
      removed: false,
      dueIn: (ms) => this.moveEarlier(entry, this.now() + Math.max(0, ms)),
      remove: () => this.remove(entry),
    };
    this.wait(entry);
    this.loop ??= this.run();
    return entry;
  }

  /** Stops the loop; cycles running end on their own (their pollables stop them). */
  stop(): Promise<void> {
    this.stopper.abort();
    this.wakeUp.abort();
    return this.loop ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    // From the next turn: what is added together (a config's models) starts together.
    await nextTurn();
    while (!signal.aborted) {
      const now = this.now();
      const due: Entry[] = [];
      let next = Number.POSITIVE_INFINITY;
      for (const e of this.waiting) {
        if (e.at <= now) due.push(e);
        else if (e.at < next) next = e.at;
      }
      if (due.length === 0) {
        // Nothing due soon: look again within a minute (a timer far longer would overflow).
        const wait = Math.min(IDLE_MS, next - now);
        this.wakeUp = new AbortController();
        this.sleepsUntil = now + wait;
        await this.timer.sleep(wait, this.wakeUp.signal);
        continue;
      }
      // The grid wakes many at once: started a few hundred at a time, the earliest first, so
      // that requests go out while the rest start.
      due.sort((a, b) => a.at - b.at);
      for (const e of due.slice(0, TURN)) this.start(e);
      if (due.length > TURN) await nextTurn();
    }
  }

  private start(entry: Entry): void {
    this.waiting.delete(entry);
    this.inFlight++;
    entry.running = entry.p.cycle().then(
      (wait) => this.ended(entry, wait),
      () => this.ended(entry, undefined),
    );
  }

  private ended(entry: Entry, wait: number | undefined): void {
    this.inFlight--;
    entry.running = undefined;
    if (entry.removed || wait === undefined || this.stopper.signal.aborted) return;
    entry.at = this.now() + Math.max(0, wait);
    this.wait(entry);
  }

  private wait(entry: Entry): void {
    this.waiting.add(entry);
    // A new earliest due time: the loop's sleep is for a later one.
    if (entry.at < this.sleepsUntil) this.wakeUp.abort();
  }

  private moveEarlier(entry: Entry, at: number): void {
    if (!this.waiting.has(entry) || !(at < entry.at)) return;
    entry.at = at;
    if (at < this.sleepsUntil) this.wakeUp.abort();
  }

  private async remove(entry: Entry): Promise<void> {
    entry.removed = true;
    this.waiting.delete(entry);
    await entry.running;
  }
}
