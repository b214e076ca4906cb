import { describe, expect, it } from 'vitest';
import { BodyPool } from '../../src/api/body-pool.js';

describe('BodyPool', () => {
  it('hands a buffer given back to the next taker that fits', () => {
    const pool = new BodyPool({ minBufferBytes: 1024 });
    const a = pool.take(100);
    expect(a.length).toBe(1024);
    pool.give(a.subarray(0, 10)); // any view of it
    expect(pool.size).toBe(1);
    const b = pool.take(500);
    expect(b.buffer).toBe(a.buffer);
    expect(pool.reused).toBe(1);
    // Too small for a larger body: a new buffer.
    pool.give(b);
    const c = pool.take(5000);
    expect(c.buffer).not.toBe(a.buffer);
    expect(c.length).toBe(5000);
    expect(pool.size).toBe(1);
  });

  it('takes the smallest buffer that fits', () => {
    const pool = new BodyPool({ minBufferBytes: 1 });
    const big = pool.take(10_000);
    const small = pool.take(2_000);
    pool.give(big);
    pool.give(small);
    expect(pool.take(1_500).buffer).toBe(small.buffer);
    expect(pool.take(1_500).buffer).toBe(big.buffer);
  });

  it('never lets two takers share a buffer: a second give, or a buffer it did not hand out, is ignored', () => {
    const pool = new BodyPool({ minBufferBytes: 64 });
    const a = pool.take(64);
    pool.give(a);
    pool.give(a);
    expect(pool.size).toBe(1);
    pool.give(Buffer.allocUnsafeSlow(64));
    pool.give(Buffer.from('a string in the shared slab'));
    expect(pool.size).toBe(1);
    const first = pool.take(64);
    const second = pool.take(64);
    expect(first.buffer).toBe(a.buffer);
    expect(second.buffer).not.toBe(first.buffer);
    // A buffer taken again can be given back again, once.
    pool.give(first);
    expect(pool.size).toBe(1);
  });

  it('keeps at most maxBuffers, the largest ones, and none over maxBufferBytes', () => {
    const pool = new BodyPool({ minBufferBytes: 1, maxBuffers: 2, maxBufferBytes: 10_000 });
    const bufs = [100, 300, 200, 20_000].map((n) => pool.take(n));
    for (const b of bufs) pool.give(b);
    expect(pool.size).toBe(2);
    const kept = [pool.take(1), pool.take(1)].map((b) => b.length).sort((x, y) => x - y);
    expect(kept).toEqual([200, 300]);
  });

  it('keeps no more than maxTotalBytes in all', () => {
    const pool = new BodyPool({ minBufferBytes: 1, maxTotalBytes: 1_000 });
    const bufs = [400, 500, 300].map((n) => pool.take(n));
    for (const b of bufs) pool.give(b);
    expect(pool.size).toBe(2);
    expect(pool.bytes).toBe(900);
    pool.take(450);
    expect(pool.bytes).toBe(400);
  });
});
