//! When each model polls: one scheduler for all of them. A model waiting for its next poll is
//! an entry in a heap of due times, not a suspended async function: with thousands of models,
//! an async loop per model kept its frames, promises, closures and listeners alive through
//! every pause (a large share of the heap), and made them again at every poll.
//!
//! The scheduler sleeps on the shared timer grid (tick-timer.ts) until the earliest due time,
//! then starts the cycles due, a few hundred per turn of the event loop.
import type { PollTimer } from './tick-timer.js';

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
  /** Due time (the scheduler's clock), or NaN while its cycle runs. */
  at: number;
  /** Index in the heap; -1 when not in it. */
  i: number;
  running: Promise<void> | undefined;
  removed: boolean;
}

/** The longest sleep of the loop. */
const IDLE_MS = 60_000;
/** Cycles started per turn of the event loop (the rest wait for the next turn). */
const TURN = 256;

/** The due times of all pollables, and the one loop that starts their cycles. */
export class PollScheduler {
  private readonly heap: Entry[] = [];
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private inFlight = 0;

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
    const scheduler = this;
    const entry: Entry = {
      p,
      at: this.now(),
      i: -1,
      running: undefined,
      removed: false,
      dueIn(ms: number) {
        scheduler.moveEarlier(entry, scheduler.now() + Math.max(0, ms));
      },
      remove() {
        return scheduler.remove(entry);
      },
    };
    this.push(entry);
    this.loop ??= this.run();
    return entry;
  }

  /** Stops the loop; cycles running end on their own (their pollables stop them). */
  stop(): Promise<void> {
    this.stopper.abort();
    return this.loop ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    // From the next turn: what is added together (a config's models) starts together.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (!signal.aborted) {
      const top = this.heap[0];
      // Nothing due soon: look again within a minute (a timer far longer would overflow).
      const wait = top === undefined ? IDLE_MS : Math.min(IDLE_MS, top.at - this.now());
      if (wait > 0) {
        await this.timer.sleep(wait, signal);
        continue;
      }
      // The grid wakes many at once: started a few hundred at a time, so that requests go out
      // while the rest start.
      for (let n = 0; n < TURN && this.heap.length > 0 && this.heap[0]!.at <= this.now(); n++) this.start(this.pop());
      if (this.heap.length > 0 && this.heap[0]!.at <= this.now()) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private start(entry: Entry): void {
    entry.at = Number.NaN;
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
    this.push(entry);
  }

  private moveEarlier(entry: Entry, at: number): void {
    if (entry.removed || entry.i < 0 || !(at < entry.at)) return;
    entry.at = at;
    this.up(entry.i);
    if (entry.i === 0) this.timer.wake(this.stopper.signal);
  }

  private async remove(entry: Entry): Promise<void> {
    entry.removed = true;
    if (entry.i >= 0) this.removeAt(entry.i);
    await entry.running;
  }

  private push(entry: Entry): void {
    entry.i = this.heap.length;
    this.heap.push(entry);
    this.up(entry.i);
    // A new earliest due time: the loop's sleep is for a later one.
    if (entry.i === 0) this.timer.wake(this.stopper.signal);
  }

  private pop(): Entry {
    const top = this.heap[0]!;
    this.removeAt(0);
    return top;
  }

  private removeAt(i: number): void {
    const h = this.heap;
    const gone = h[i]!;
    const last = h.pop()!;
    gone.i = -1;
    if (last === gone) return;
    h[i] = last;
    last.i = i;
    this.down(i);
    this.up(last.i);
  }

  private up(i: number): void {
    const h = this.heap;
    const e = h[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!(e.at < h[parent]!.at)) break;
      h[i] = h[parent]!;
      h[i]!.i = i;
      i = parent;
    }
    h[i] = e;
    e.i = i;
  }

  private down(i: number): void {
    const h = this.heap;
    const n = h.length;
    const e = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && h[r]!.at < h[l]!.at ? r : l;
      if (!(h[c]!.at < e.at)) break;
      h[i] = h[c]!;
      h[i]!.i = i;
      i = c;
    }
    h[i] = e;
    e.i = i;
  }
}
