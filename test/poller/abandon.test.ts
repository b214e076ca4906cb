import { describe, expect, it } from 'vitest';
import { Abandoner } from '../../src/poller/abandon.js';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Abandoner', () => {
  it('settles with the work when it finishes first', async () => {
    const c = new AbortController();
    const discarded: number[] = [];
    const abandon = new Abandoner<number>(c.signal, (v) => discarded.push(v));
    await expect(abandon.wrap(Promise.resolve(1))).resolves.toBe(1);
    await expect(abandon.wrap(Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    c.abort(new Error('stop'));
    expect(discarded).toEqual([]);
  });

  it('rejects with the reason at the abort, and hands a value that comes later to discard', async () => {
    const c = new AbortController();
    const work = deferred<string>();
    const discarded: string[] = [];
    const abandon = new Abandoner<string>(c.signal, (v) => discarded.push(v));
    const p = abandon.wrap(work.promise);
    c.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    work.resolve('late page');
    await work.promise;
    await Promise.resolve();
    expect(discarded).toEqual(['late page']);
    const after = abandon.wrap(Promise.resolve('after'));
    await expect(after).rejects.toThrow('stop');
    await Promise.resolve();
    expect(discarded).toEqual(['late page', 'after']);
  });

  it('abandons every piece of work out at the abort, whichever slot it took, and reuses freed slots before', async () => {
    const c = new AbortController();
    const discarded: string[] = [];
    const abandon = new Abandoner<string>(c.signal, (v) => discarded.push(v));
    // Work that settled frees its slot: many in turn never pile up, and each settles as its work does.
    for (let i = 0; i < 50; i++) await expect(abandon.wrap(Promise.resolve(`page ${i}`))).resolves.toBe(`page ${i}`);
    const first = deferred<string>();
    const second = deferred<string>();
    const done = deferred<string>();
    const a = abandon.wrap(first.promise);
    const b = abandon.wrap(second.promise);
    const settled = abandon.wrap(done.promise);
    done.resolve('in time');
    await expect(settled).resolves.toBe('in time');
    c.abort(new Error('stopping'));
    await expect(a).rejects.toThrow('stopping');
    await expect(b).rejects.toThrow('stopping');
    second.resolve('late 2');
    first.resolve('late 1');
    await Promise.all([first.promise, second.promise]);
    await Promise.resolve();
    expect(discarded.sort()).toEqual(['late 1', 'late 2']);
  });

  it('hands a failure of abandoned work to nobody', async () => {
    const c = new AbortController();
    const abandon = new Abandoner<string>(c.signal, () => {
      throw new Error('a failure is not a value');
    });
    let fail!: (err: Error) => void;
    const p = abandon.wrap(new Promise<string>((_, reject) => (fail = reject)));
    c.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    fail(new Error('request failed after the stop'));
    await new Promise((r) => setImmediate(r));
  });
});
