import { describe, expect, it } from 'vitest';
import { withRetry, type RetryOptions } from '../../src/api/retry.js';

class Fail extends Error {
  constructor(readonly retryable: boolean, readonly retryAfterMs?: number) {
    super(retryable ? 'transient' : 'permanent');
  }
}

function harness(deadlineMs: number) {
  let now = 1_000;
  const waits: number[] = [];
  const options: RetryOptions = {
    deadlineMs,
    baseDelayMs: 100,
    maxDelayMs: 1000,
    clock: { now: () => now },
    random: () => 0.5,
    isRetryable: (e) => e instanceof Fail && e.retryable,
    retryAfterMs: (e) => (e instanceof Fail ? e.retryAfterMs : undefined),
    deadlineError: () => new Error('deadline'),
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
  return { options, waits, advance: (ms: number) => (now += ms) };
}

describe('withRetry', () => {
  it('retries retryable errors with growing jittered waits and returns the success', async () => {
    const h = harness(10_000);
    let calls = 0;
    const result = await withRetry(async ({ attempt }) => {
      calls++;
      if (attempt < 3) throw new Fail(true);
      return 'ok';
    }, h.options);
    expect(result).toBe('ok');
    expect(calls).toBe(4);
    expect(h.waits).toEqual([50, 100, 200]);
  });

  it('throws a non-retryable error at once', async () => {
    const h = harness(10_000);
    await expect(withRetry(async () => { throw new Fail(false); }, h.options)).rejects.toThrow('permanent');
    expect(h.waits).toEqual([]);
  });

  it('waits at least what Retry-After asks', async () => {
    const h = harness(10_000);
    let calls = 0;
    await withRetry(async () => {
      if (calls++ === 0) throw new Fail(true, 3000);
      return 1;
    }, h.options);
    expect(h.waits).toEqual([3000]);
  });

  it('throws the last error when the next wait would pass the deadline', async () => {
    const h = harness(1000);
    let calls = 0;
    const err = await withRetry(async () => {
      calls++;
      h.advance(100);
      throw new Fail(true);
    }, h.options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Fail);
    // waits 50, 100, 200, 400 would be followed by 500 with 100 left: stop.
    expect(h.waits).toEqual([50, 100, 200]);
    expect(calls).toBe(4);
  });

  it('throws at once when Retry-After reaches past the deadline', async () => {
    const h = harness(5000);
    const err = await withRetry(async () => { throw new Fail(true, 60_000); }, h.options).catch((e: unknown) => e);
    expect((err as Fail).retryAfterMs).toBe(60_000);
    expect(h.waits).toEqual([]);
  });

  it('aborts an attempt that runs into the deadline', async () => {
    const started = performance.now();
    const err = await withRetry(
      ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      { deadlineMs: 50, baseDelayMs: 10, maxDelayMs: 10, isRetryable: () => true, deadlineError: () => new Error('deadline') },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('deadline');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('throws the caller’s abort reason', async () => {
    const controller = new AbortController();
    const p = withRetry(
      ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted request')))),
      { deadlineMs: 5000, baseDelayMs: 10, maxDelayMs: 10, isRetryable: () => true, deadlineError: () => new Error('deadline'), signal: controller.signal },
    );
    controller.abort(new Error('user stop'));
    await expect(p).rejects.toThrow('user stop');
  });

  it('a caller\'s signal shared by many calls aborts those in progress only, and later calls at once', async () => {
    const caller = new AbortController();
    const opts = { deadlineMs: 5000, baseDelayMs: 10, maxDelayMs: 10, isRetryable: () => false, deadlineError: () => new Error('deadline'), signal: caller.signal };
    // calls that finished before the abort are not touched by it
    const seen: AbortSignal[] = [];
    for (let i = 0; i < 3; i++) await withRetry(async ({ signal }) => void seen.push(signal), opts);
    const hanging = [1, 2].map(() => withRetry(({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))), opts));
    caller.abort(new Error('stopping'));
    for (const p of hanging) await expect(p).rejects.toThrow('stopping');
    expect(seen.every((s) => !s.aborted)).toBe(true);
    // a later call's attempt gets a signal already aborted (the request then fails at once)
    await expect(withRetry(async ({ signal }) => void signal.throwIfAborted(), opts)).rejects.toThrow('stopping');
  });
});
