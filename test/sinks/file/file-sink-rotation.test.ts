//! The file sink's rotation: by size without splitting a line, by age, gzip of final files,
//! and rotations and compressions that a crash left half done.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { entryToNdjson } from '../../../src/records/ndjson.js';
import { batchOf, entry, fileSinkScratch, lines, MemoryStore, options, range, readTree, seqsIn, signal } from './helpers.js';

const scratch = fileSinkScratch();

describe('file sink: rotation', () => {
  const line = entryToNdjson(entry(1)).length;

  it('rotates before a line would take the file past max_bytes, never splitting a line', async () => {
    const store = new MemoryStore();
    const path = join(scratch.dir, 'out.ndjson');
    const sink = await scratch.open(store, options(scratch.dir, { path, rotate: { max_bytes: line * 3 } }));
    await scratch.deliver(sink, store, batchOf(lines(7)));
    store.clock += 1_000;
    await scratch.deliver(sink, store, batchOf(lines(1, 8)));
    const tree = readTree(scratch.dir);
    expect(Object.keys(tree)).toEqual([
      'out.20261122T100000Z.1.ndjson',
      'out.20261122T100000Z.ndjson',
      'out.ndjson',
    ]);
    expect(tree['out.20261122T100000Z.ndjson']).toBe(lines(3).map(entryToNdjson).join(''));
    expect(tree['out.20261122T100000Z.1.ndjson']).toBe(lines(3, 4).map(entryToNdjson).join(''));
    expect(tree['out.ndjson']).toBe(lines(2, 7).map(entryToNdjson).join(''));
    for (const text of Object.values(tree)) expect(text.length).toBeLessThanOrEqual(line * 3);
  });

  it('rotates a file max_age after it was started', async () => {
    const store = new MemoryStore();
    const path = join(scratch.dir, 'out.ndjson');
    const sink = await scratch.open(store, options(scratch.dir, { path, rotate: { max_age: 3_600_000 } }));
    await scratch.deliver(sink, store, batchOf(lines(2)));
    store.clock += 3_599_999;
    await scratch.deliver(sink, store, batchOf(lines(1, 3)));
    expect(Object.keys(readTree(scratch.dir))).toEqual(['out.ndjson']);
    store.clock += 1;
    await scratch.deliver(sink, store, batchOf(lines(1, 4)));
    expect(readTree(scratch.dir)).toEqual({
      'out.20261122T110000Z.ndjson': lines(3).map(entryToNdjson).join(''),
      'out.ndjson': entryToNdjson(entry(4)),
    });
  });

  it('gzips rotated files in the background once they are final', async () => {
    const store = new MemoryStore();
    const path = join(scratch.dir, 'out.ndjson');
    const sink = await scratch.open(store, options(scratch.dir, { path, rotate: { max_bytes: line * 4 }, compress: 'gzip' }));
    await scratch.deliver(sink, store, batchOf(lines(10)));
    await scratch.deliver(sink, store, batchOf(lines(1, 11)));
    await sink.close();
    const names = readdirSync(scratch.dir).sort();
    expect(names).toEqual(['out.20261122T100000Z.1.ndjson.gz', 'out.20261122T100000Z.ndjson.gz', 'out.ndjson']);
    const tree = readTree(scratch.dir);
    expect(tree['out.20261122T100000Z.ndjson.gz']).toBe(lines(4).map(entryToNdjson).join(''));
    expect(tree['out.20261122T100000Z.1.ndjson.gz']).toBe(lines(4, 5).map(entryToNdjson).join(''));
    expect(seqsIn(scratch.dir)).toEqual(range(1, 11));
    // The compressed files leave the state with the next commit.
    const b = await scratch.open(store, options(scratch.dir, { path, rotate: { max_bytes: line * 4 }, compress: 'gzip' }));
    await scratch.deliver(b, store, batchOf(lines(1, 12)));
    const pending = (JSON.parse(store.state!) as { rotated: { path: string }[] }).rotated.map((r) => r.path);
    expect(pending).not.toContain(join(scratch.dir, 'out.20261122T100000Z.ndjson'));
    expect(pending).not.toContain(join(scratch.dir, 'out.20261122T100000Z.1.ndjson'));
    expect(seqsIn(scratch.dir)).toEqual(range(1, 12));
    expect(store.errors()).toEqual([]);
  });

  it('lets a rotated file go from its state at the next batch once it is compressed, with no restart', async () => {
    const store = new MemoryStore();
    const path = join(scratch.dir, 'out.ndjson');
    const sink = await scratch.open(store, options(scratch.dir, { path, rotate: { max_bytes: line * 4 }, compress: 'gzip' }));
    await scratch.deliver(sink, store, batchOf(lines(6)));
    const rotated = join(scratch.dir, 'out.20261122T100000Z.ndjson');
    const pending = () => (JSON.parse(store.state!) as { rotated: { path: string }[] }).rotated.map((r) => r.path);
    expect(pending()).toContain(rotated);
    // Compression starts at the next batch, when the rotated file is final; the batch after
    // its end lets the file go. The same batch sent again writes nothing more.
    for (let i = 0; i < 500 && pending().includes(rotated); i++) {
      await scratch.deliver(sink, store, batchOf(lines(1, 7)));
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(pending()).not.toContain(rotated);
    expect(existsSync(rotated + '.gz')).toBe(true);
    expect(store.errors()).toEqual([]);
    expect(seqsIn(scratch.dir)).toEqual(range(1, 7));
  });

  it('compresses at the next open what a crash left uncompressed, replacing a partial temporary file', async () => {
    const store = new MemoryStore();
    const path = join(scratch.dir, 'out.ndjson');
    const opts = options(scratch.dir, { path, rotate: { max_bytes: line * 4 }, compress: 'gzip' });
    const a = await scratch.open(store, opts);
    await scratch.deliver(a, store, batchOf(lines(6)));
    const rotated = join(scratch.dir, 'out.20261122T100000Z.ndjson');
    expect(existsSync(rotated)).toBe(true);
    writeFileSync(rotated + '.gz.tmp', gzipSync('partial').subarray(0, 10));
    const b = await scratch.open(store, opts);
    await b.close();
    expect(readdirSync(scratch.dir).sort()).toEqual(['out.20261122T100000Z.ndjson.gz', 'out.ndjson']);
    expect(seqsIn(scratch.dir)).toEqual(range(1, 6));
  });

  it('completes at open a rotation that was committed but not done', async () => {
    const store = new MemoryStore();
    const path = join(scratch.dir, 'out.ndjson');
    const opts = options(scratch.dir, { path, rotate: { max_bytes: line * 3 } });
    const a = await scratch.open(store, opts);
    await scratch.deliver(a, store, batchOf(lines(3)));
    store.crashAfterCommitState = true;
    const replayed = batchOf(lines(2, 4));
    expect((await a.send(replayed, signal)).status).toBe('retry');
    store.crashAfterCommitState = false;
    expect(readdirSync(scratch.dir)).toEqual(['out.ndjson']);

    const b = await scratch.open(store, opts);
    expect(readdirSync(scratch.dir).sort()).toEqual(['out.20261122T100000Z.ndjson']);
    await scratch.deliver(b, store, replayed);
    expect(readTree(scratch.dir)).toEqual({
      'out.20261122T100000Z.ndjson': lines(3).map(entryToNdjson).join(''),
      'out.ndjson': lines(2, 4).map(entryToNdjson).join(''),
    });
  });

  it('cuts both files back when a crash follows a rotation inside an uncommitted batch', async () => {
    const store = new MemoryStore();
    const path = join(scratch.dir, 'out.ndjson');
    const opts = options(scratch.dir, { path, rotate: { max_bytes: line * 3 } });
    const a = await scratch.open(store, opts);
    await scratch.deliver(a, store, batchOf(lines(2)));
    // Seq 3 fills the file, 4 and 5 go to a new one: the rotation is committed, the batch is not.
    const replayed = batchOf(lines(3, 3));
    expect((await a.send(replayed, signal)).status).toBe('ok');
    expect(seqsIn(scratch.dir)).toEqual(range(1, 5));

    const b = await scratch.open(store, opts);
    expect(seqsIn(scratch.dir)).toEqual(range(1, 2));
    await scratch.deliver(b, store, replayed);
    expect(seqsIn(scratch.dir)).toEqual(range(1, 5));
    const tree = readTree(scratch.dir);
    expect(tree['out.20261122T100000Z.ndjson']).toBe(lines(2).map(entryToNdjson).join(''));
    expect(tree['out.ndjson']).toBe(lines(3, 3).map(entryToNdjson).join(''));
  });
});
