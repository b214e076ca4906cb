import { afterEach, describe, expect, it, vi } from 'vitest';
import PQueue from 'p-queue';
import { FairSchedule, requestQueue } from '../../src/poller/fair-schedule.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('fair schedule', () => {
  it('runs a model that has not sent in this interval before the further requests of busy models', async () => {
    const queue = new PQueue({ concurrency: 1, autoStart: false });
    let now = 0;
    const fair = new FairSchedule(queue, 1_000, () => now);
    const order: string[] = [];
    const add = (model: string, label: string) => fair.add(model, async () => void order.push(label));
    const done = [add('busy', 'busy-1'), add('busy', 'busy-2'), add('busy', 'busy-3'), add('other', 'other-1'), add('quiet', 'quiet-1'), add('other', 'other-2')];
    queue.start();
    await Promise.all(done);
    expect(order).toEqual(['busy-1', 'other-1', 'quiet-1', 'busy-2', 'other-2', 'busy-3']);

    // An interval later, the busy model's past requests no longer count against it.
    order.length = 0;
    now = 1_500;
    queue.pause();
    const again = [add('quiet', 'quiet-2'), add('busy', 'busy-4')];
    queue.start();
    await Promise.all(again);
    expect(order).toEqual(['quiet-2', 'busy-4']);
  });

  it('runs each model\'s first request of the interval first, then fresh reads, then re-reads', async () => {
    const queue = new PQueue({ concurrency: 1, autoStart: false });
    const fair = new FairSchedule(queue, 1_000, () => 0);
    const order: string[] = [];
    const add = (model: string, label: string, kind: 'fresh' | 'reread') => fair.add(model, async () => void order.push(label), kind);
    const done = [
      add('a', 'a-fresh-1', 'fresh'),
      add('a', 'a-reread', 'reread'),
      add('a', 'a-fresh-2', 'fresh'),
      add('b', 'b-reread-1', 'reread'),
      add('b', 'b-reread-2', 'reread'),
      add('c', 'c-fresh-1', 'fresh'),
    ];
    queue.start();
    await Promise.all(done);
    expect(order).toEqual(['a-fresh-1', 'b-reread-1', 'c-fresh-1', 'a-fresh-2', 'a-reread', 'b-reread-2']);
    expect(fair.rates().requestsPerSec).toBe(6);
  });

  it('measures the requests sent and the time spent in requests over the last interval only', async () => {
    let now = 0;
    const fair = new FairSchedule(new PQueue({ concurrency: 2 }), 2_000, () => now);
    const request = () => fair.add('a', async () => void (now += 500));
    await request(); // from 0 to 500 ms
    await request(); // from 500 to 1 000 ms
    expect(fair.rates()).toEqual({ requestsPerSec: 1, inFlight: 0.5 });
    now = 2_500; // the second that held both starts has left the interval
    expect(fair.rates()).toEqual({ requestsPerSec: 0, inFlight: 0.25 });
    now = 3_500;
    expect(fair.rates()).toEqual({ requestsPerSec: 0, inFlight: 0 });
  });

  it('the request queue runs poll.concurrency requests at once, and starts poll.rate_limit per its span', async () => {
    vi.useFakeTimers();
    const started: number[] = [];
    const gates: Array<() => void> = [];
    const limited = requestQueue(10, { count: 2, perMs: 1_000 });
    const all = Array.from({ length: 5 }, (_, i) => limited.add(async () => void started.push(i)));
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(999);
    expect(started).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual([0, 1, 2, 3]);
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all(all);
    expect(started).toEqual([0, 1, 2, 3, 4]);

    // No rate limit: only the concurrency holds requests back.
    started.length = 0;
    const bounded = requestQueue(3, null);
    const running = Array.from({ length: 5 }, (_, i) => bounded.add(() => new Promise<void>((resolve) => gates.push(() => resolve(void started.push(i))))));
    await vi.advanceTimersByTimeAsync(0);
    expect(gates).toHaveLength(3);
    gates.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(gates).toHaveLength(3);
    while (gates.length > 0) {
      gates.shift()!();
      await vi.advanceTimersByTimeAsync(0);
    }
    await Promise.all(running);
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });
});

