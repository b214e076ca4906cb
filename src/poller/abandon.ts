//! Stops waiting for a promise when a signal aborts, for work that cannot be cancelled where it
//! waits (a request queued for its turn under the rate limit has not started, so its own abort
//! signal does not reach it until then).

/**
 * Settles like `work`, or rejects with the signal's reason as soon as `signal` aborts. A value
 * that `work` yields after that goes to `discard` (e.g. to give a response body back).
 */
export function abandonOnAbort<T>(work: Promise<T>, signal: AbortSignal, discard: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    // Abandoned before it settled: a value is given back, a failure is nobody's to report.
    work.then(discard, () => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    let abandoned = false;
    const onAbort = (): void => {
      abandoned = true;
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (abandoned) discard(value);
        else resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}
