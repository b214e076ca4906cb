//! Rate limit of a repeated log line: a failure that repeats on every attempt is said once
//! per interval, with the count of the lines held back since the last one said.

/** Lets one line through per interval and counts the ones it holds back. */
export class LogThrottle {
  #saidAt = Number.NEGATIVE_INFINITY;
  #held = 0;

  constructor(private readonly intervalMs: number) {}

  /**
   * Whether the line due at `nowMs` is to be logged: `{ suppressed }` (the lines held back
   * since the last one logged) when it is, `undefined` when it is held back.
   */
  take(nowMs: number): { suppressed: number } | undefined {
    if (nowMs - this.#saidAt < this.intervalMs) {
      this.#held++;
      return undefined;
    }
    this.#saidAt = nowMs;
    const suppressed = this.#held;
    this.#held = 0;
    return { suppressed };
  }
}
