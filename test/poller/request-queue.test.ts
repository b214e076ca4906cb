//! The request queue: priorities (arrival order among equals), the concurrency limit, the
//! rate limit per interval, failures passed on, and clear().
import { describe, expect, it } from 'vitest';
import { RequestQueue } from '../../src/poller/request-queue.js';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('RequestQueue', () => {
  it('runs the highest priority first, in order of arrival among equals, within the concurrency', async () => {
    const q = new RequestQueue({ concurrency: 1 });
    const order: string[] = [];
    const gate = deferred();
    const first = q.add(async () => {
      order.push('first');
      await gate.promise;
    });
    // queued while the first runs
    const rest = [
      ['low-1', 1],
      ['high-1', 5],
      ['mid', 3],
      ['high-2', 5],
      ['low-2', 1],
      ['high-3', 5],
    ].map(([label, priority]) => q.add(async () => void order.push(label as string), { priority: priority as number }));
    expect(q.size).toBe(6);
    expect(q.pending).toBe(1);
    gate.resolve();
    await Promise.all([first, ...rest]);
    expect(order).toEqual(['first', 'high-1', 'high-2', 'high-3', 'mid', 'low-1', 'low-2']);
    expect(q.pending).toBe(0);
  });

  it('never runs more than `concurrency` at once, and passes values and failures on', async () => {
    const q = new RequestQueue({ concurrency: 3 });
    let running = 0;
    let most = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        q.add(async () => {
          running++;
          most = Math.max(most, running);
          await new Promise((r) => setTimeout(r, 2));
          running--;
          if (i === 7) throw new Error('seven');
          return i * 2;
        }),
      ),
    );
    expect(most).toBe(3);
    expect(results[3]).toEqual({ status: 'fulfilled', value: 6 });
    expect(results[7]).toMatchObject({ status: 'rejected', reason: new Error('seven') });
    // a function that throws before returning a promise fails its own request only
    await expect(q.add(() => { throw new Error('sync'); })).rejects.toThrow('sync');
    await expect(q.add(async () => 'after')).resolves.toBe('after');
  });

  it('starts at most intervalCap per interval', async () => {
    let now = 0;
    const q = new RequestQueue({ concurrency: 10, intervalCap: 2, intervalMs: 50, now: () => now });
    const started: number[] = [];
    const all = Array.from({ length: 5 }, (_, i) => q.add(async () => void started.push(i)));
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    // the window has not passed on the queue's clock: a timer firing early starts nothing
    await new Promise((r) => setTimeout(r, 80));
    expect(started).toEqual([0, 1]);
    now = 50;
    await new Promise((r) => setTimeout(r, 80));
    expect(started).toEqual([0, 1, 2, 3]);
    now = 100;
    await Promise.all(all);
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });

  it('clear() drops the waiting requests; the running one finishes', async () => {
    const q = new RequestQueue({ concurrency: 1 });
    const gate = deferred();
    let ran = 0;
    const running = q.add(async () => {
      await gate.promise;
      return 'done';
    });
    void q.add(async () => void ran++);
    void q.add(async () => void ran++);
    q.clear();
    expect(q.size).toBe(0);
    gate.resolve();
    await expect(running).resolves.toBe('done');
    await new Promise((r) => setTimeout(r, 10));
    expect(ran).toBe(0);
  });
});
