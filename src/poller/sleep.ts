//! Abortable, unref'd sleeps for the poll and delivery loops.

/** Resolves after `ms`, or early (without error) when `signal` aborts. The timer never holds the process open. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Exponential backoff with full jitter: a random delay in [0, min(max, base·2^attempt)]. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(random() * cap);
}

/** `ms` spread by ±`fraction` (0.1 = ±10%). */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return Math.max(0, Math.round(ms * (1 + fraction * (2 * random() - 1))));
}
