import { describe, expect, it } from 'vitest';
import { abandonOnAbort } from '../../src/poller/abandon.js';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('abandonOnAbort', () => {
  it('settles with the work when it finishes first', async () => {
    const c = new AbortController();
    const discarded: number[] = [];
    await expect(abandonOnAbort(Promise.resolve(1), c.signal, (v) => discarded.push(v))).resolves.toBe(1);
    await expect(abandonOnAbort(Promise.reject(new Error('failed')), c.signal, (v: number) => discarded.push(v))).rejects.toThrow('failed');
    c.abort(new Error('stop'));
    expect(discarded).toEqual([]);
  });

  it('rejects with the reason at the abort, and hands a value that comes later to discard', async () => {
    const c = new AbortController();
    const work = deferred<string>();
    const discarded: string[] = [];
    const p = abandonOnAbort(work.promise, c.signal, (v) => discarded.push(v));
    c.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    work.resolve('late page');
    await work.promise;
    await Promise.resolve();
    expect(discarded).toEqual(['late page']);
    const after = abandonOnAbort(Promise.resolve('after'), c.signal, (v) => discarded.push(v));
    await expect(after).rejects.toThrow('stop');
    await Promise.resolve();
    expect(discarded).toEqual(['late page', 'after']);
  });
});
