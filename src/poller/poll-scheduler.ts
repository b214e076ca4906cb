//! When each model polls: one scheduler for all of them. A model waiting for its next poll is
//! an entry with a due time, not a suspended async function: with thousands of models, an
//! async loop per model kept its frames, promises, closures and listeners alive through every
//! pause (a large share of the heap), and made them again at every poll.
//!
//! The entries wait in slots of a time grid, by the grid point at or after their due time:
//! the scheduler sleeps until the earliest slot, then starts the cycles in it, a few hundred
//! per turn of the event loop. So the models due in the same grid step are polled together:
//! a burst of requests a few times a second costs far less CPU (on both ends of the
//! connection) than the same requests spread evenly, one wake-up each.
import { sleep } from '../time/backoff.js';

/** The sleeps of the poll scheduler and the grid its wake-ups fall on: {@link gridTimer}, or virtual time in tests. */
export interface PollTimer {
  /** Grid step (ms): a cycle starts at the first grid point at or after its due time. */
  readonly gridMs: number;
  /** Resolves after `ms`, or early (without error) when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The daemon's timer: a grid of `gridMs` on the monotonic clock. */
export function gridTimer(gridMs: number): PollTimer {
  if (!(gridMs > 0)) throw new RangeError(`gridMs must be positive, got ${gridMs}`);
  // A millisecond more: timers may fire up to one early on the monotonic clock.
  return { gridMs, sleep: (ms, signal) => sleep(ms + 1, signal) };
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
  /** The entries waiting for their cycle (not running, not removed), by their grid point (in steps). */
  private readonly slots = new Map<number, Set<Entry>>();
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private inFlight = 0;
  /** Ends the loop's sleep early: aborted when something comes due before the slot it sleeps for. */
  private wakeUp = new AbortController();
  private sleepsUntilSlot = Number.NEGATIVE_INFINITY;

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
    const grid = this.timer.gridMs;
    // From the next turn: what is added together (a config's models) starts together.
    await nextTurn();
    while (!signal.aborted) {
      const reached = Math.floor(this.now() / grid);
      const due: Entry[] = [];
      let next = Number.POSITIVE_INFINITY;
      for (const [slot, entries] of this.slots) {
        if (slot <= reached) for (const e of entries) due.push(e);
        else if (slot < next) next = slot;
      }
      // The grid wakes many at once: started a few hundred at a time, so that requests go out
      // while the rest start.
      for (const e of due.slice(0, TURN)) this.start(e);
      if (due.length > TURN) {
        await nextTurn();
        continue;
      }
      // Nothing due soon: look again within a minute (a timer far longer would overflow).
      this.wakeUp = new AbortController();
      this.sleepsUntilSlot = next;
      await this.timer.sleep(Math.min(IDLE_MS, next * grid - this.now()), this.wakeUp.signal);
    }
  }

  private start(entry: Entry): void {
    this.unwait(entry);
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

  private slotOf(entry: Entry): number {
    return Math.ceil(entry.at / this.timer.gridMs);
  }

  private wait(entry: Entry): void {
    const slot = this.slotOf(entry);
    let entries = this.slots.get(slot);
    if (!entries) this.slots.set(slot, (entries = new Set()));
    entries.add(entry);
    // A new earliest slot: the loop's sleep is for a later one.
    if (slot < this.sleepsUntilSlot) this.wakeUp.abort();
  }

  /** Takes a waiting entry out of its slot; false when it was not waiting. */
  private unwait(entry: Entry): boolean {
    const slot = this.slotOf(entry);
    const entries = this.slots.get(slot);
    if (!entries?.delete(entry)) return false;
    if (entries.size === 0) this.slots.delete(slot);
    return true;
  }

  private moveEarlier(entry: Entry, at: number): void {
    if (!(at < entry.at) || !this.unwait(entry)) return;
    entry.at = at;
    this.wait(entry);
  }

  private async remove(entry: Entry): Promise<void> {
    entry.removed = true;
    this.unwait(entry);
    await entry.running;
  }
}
