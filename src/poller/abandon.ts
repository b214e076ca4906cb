//! Stops waiting for a promise when a signal aborts, for work that cannot be cancelled where it
//! waits (a request queued for its turn under the rate limit has not started, so its own abort
//! signal does not reach it until then).

/**
 * Abandons work when a long-lived signal aborts (a poller's stop), with one listener on the
 * signal for all the work ever waited for: a listener added and removed per request churned
 * the signal's listener bookkeeping a thousand times a second at 10,000 models. A poller has
 * one or two requests out at a time, kept in a short array of slots (no set to rehash).
 */
export class Abandoner<T> {
  /** The rejecters of the work waited for now; a free slot is undefined. */
  #waiting: Array<((reason: unknown) => void) | undefined> = [];

  /** `discard` gets a value that arrives after its work was abandoned (e.g. to give a response body back). */
  constructor(
    private readonly signal: AbortSignal,
    private readonly discard: (value: T) => void,
  ) {
    signal.addEventListener(
      'abort',
      () => {
        const waiting = this.#waiting;
        this.#waiting = [];
        for (const reject of waiting) reject?.(signal.reason);
      },
      { once: true },
    );
  }

  /** Settles like `work`, or rejects with the signal's reason as soon as the signal aborts. */
  wrap(work: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      // Abandoned before it settled: a value is given back, a failure is nobody's to report.
      work.then(this.discard, ignore);
      return Promise.reject(this.signal.reason as Error);
    }
    return new Promise<T>((resolve, reject) => {
      const waiting = this.#waiting;
      let slot = waiting.indexOf(undefined);
      if (slot === -1) slot = waiting.push(reject) - 1;
      else waiting[slot] = reject;
      work.then(
        (value) => {
          if (this.#release(waiting, slot, reject)) resolve(value);
          else this.discard(value);
        },
        (err: unknown) => {
          if (this.#release(waiting, slot, reject)) reject(err as Error);
        },
      );
    });
  }

  /** Frees the slot of `reject`; false when the abort already took it (the work was abandoned). */
  #release(waiting: Array<((reason: unknown) => void) | undefined>, slot: number, reject: (reason: unknown) => void): boolean {
    if (waiting !== this.#waiting || waiting[slot] !== reject) return false;
    waiting[slot] = undefined;
    return true;
  }
}

const ignore = (): void => undefined;
