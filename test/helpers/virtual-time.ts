//! Virtual time for tests of the poll loop: sleeps end only when the test moves the clock,
//! and the clock jumps from one wake-up to the next once every sleeper is asleep, so a
//! minute of polling runs in a moment and the same way every time.
import type { PollTimer } from '../../src/poller/poll-scheduler.js';

/** A clock and a sleep that follow it. */
export class VirtualTime implements PollTimer {
  private t: number;
  private sleepers: Array<{ at: number; wake: () => void; signal: AbortSignal | undefined }> = [];

  /** `gridMs`: the scheduler's grid (1 by default: each cycle starts at its own due time). */
  constructor(
    startMs: number,
    readonly gridMs = 1,
  ) {
    this.t = startMs;
  }

  /** The current virtual time (epoch ms). */
  readonly now = (): number => this.t;

  /** Resolves once the virtual clock reaches now + `ms`, or at once when `signal` aborts. */
  readonly sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      // The poller passes the same signal to many sleeps: a sleep that ends lets go of it.
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((x) => x !== s);
        resolve();
      };
      const s = {
        signal,
        at: this.t + Math.max(0, ms),
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.sleepers.push(s);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  /**
   * Runs until the virtual clock reaches `untilMs`: waits (in real time) until `asleep`
   * sleepers wait and `idle()` says nothing else is under way, then moves the clock to the
   * earliest wake-up and wakes every sleeper due. `at(ms)` callbacks run when the clock
   * passes their time.
   */
  async runUntil(untilMs: number, asleep: number, at: Array<{ ms: number; run: () => void }> = [], idle: () => boolean = () => true): Promise<void> {
    const pending = [...at].sort((a, b) => a.ms - b.ms);
    for (;;) {
      const deadline = Date.now() + 10_000;
      // Twice in a row: what just woke may take a turn or two to start its work.
      for (let settled = 0; settled < 2; ) {
        if (Date.now() > deadline) throw new Error(`virtual time: ${this.sleepers.length} of ${asleep} sleepers${idle() ? '' : ', not idle,'} after 10 s of real time`);
        await new Promise((r) => setTimeout(r, 1));
        settled = this.sleepers.length >= asleep && idle() ? settled + 1 : 0;
      }
      const next = Math.min(...this.sleepers.map((s) => s.at));
      if (pending.length > 0 && pending[0]!.ms <= Math.min(next, untilMs)) {
        const p = pending.shift()!;
        this.t = Math.max(this.t, p.ms);
        p.run();
        continue;
      }
      if (next > untilMs) {
        this.t = untilMs;
        return;
      }
      this.t = next;
      const due = this.sleepers.filter((s) => s.at <= next);
      this.sleepers = this.sleepers.filter((s) => s.at > next);
      for (const s of due) s.wake();
    }
  }
}
