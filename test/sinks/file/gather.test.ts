// Gathered appends against a real file: whatever the pieces and however short each write
// comes back, the file holds their bytes in order, and the caller hears of every byte.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_IOVECS, dropBytes, writeAll } from '../../../src/sinks/file/gather.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-gather-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dropBytes', () => {
  it('drops whole pieces, then part of one', () => {
    const pieces = [Buffer.from('abc'), Buffer.from(''), Buffer.from('de'), Buffer.from('fgh')];
    expect(dropBytes(pieces, 0).map(String)).toEqual(['abc', '', 'de', 'fgh']);
    expect(dropBytes(pieces, 3).map(String)).toEqual(['de', 'fgh']);
    expect(dropBytes(pieces, 4).map(String)).toEqual(['e', 'fgh']);
    expect(dropBytes(pieces, 7).map(String)).toEqual(['h']);
    expect(dropBytes(pieces, 8)).toEqual([]);
  });
});

describe('writeAll', () => {
  it('appends every byte in order through short writes', { timeout: 60_000 }, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 8 }),
        async (arrays, caps) => {
          const path = join(dir, `f${run++}`);
          const fh = await open(path, 'a');
          let calls = 0;
          let heard = 0;
          // The real file, but each writev lands only a prefix of what it was given, as a
          // write interrupted part way would.
          const short = {
            async writev(buffers: Buffer[]) {
              const cap = caps[calls++ % caps.length]!;
              const { bytesWritten } = await fh.write(Buffer.concat(buffers).subarray(0, cap));
              return { bytesWritten };
            },
          };
          try {
            await writeAll(short, arrays.map((a) => Buffer.from(a)), (n) => (heard += n));
          } finally {
            await fh.close();
          }
          const expected = Buffer.concat(arrays.map((a) => Buffer.from(a)));
          expect(readFileSync(path).equals(expected)).toBe(true);
          expect(heard).toBe(expected.length);
        },
      ),
      { numRuns: 200, seed: 20261123 },
    );
  });

  it(`writes more than ${MAX_IOVECS} pieces to a real file handle`, async () => {
    const path = join(dir, 'many');
    const fh = await open(path, 'a');
    const pieces = Array.from({ length: 3 * MAX_IOVECS + 7 }, (_, i) => Buffer.from(`line ${i}\n`));
    let heard = 0;
    try {
      await writeAll(fh, pieces, (n) => (heard += n));
    } finally {
      await fh.close();
    }
    expect(readFileSync(path).equals(Buffer.concat(pieces))).toBe(true);
    expect(heard).toBe(Buffer.concat(pieces).length);
  });

  it('refuses a write that lands nothing instead of looping', async () => {
    const stuck = { writev: async () => ({ bytesWritten: 0 }) };
    await expect(writeAll(stuck, [Buffer.from('x')], () => {})).rejects.toThrow(/wrote nothing/);
  });
});
