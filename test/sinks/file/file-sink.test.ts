//! The file sink in process: writing, reconciliation after simulated crashes, errors and
//! closing. Rotation and gzip: file-sink-rotation.test.ts.
import { appendFileSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileSink } from '../../../src/sinks/file/index.js';
import { entryToNdjson } from '../../../src/records/ndjson.js';
import { batchOf, entry, fileSinkScratch, lines, MemoryStore, options, range, readTree, seqsIn, signal } from './helpers.js';

const scratch = fileSinkScratch();

describe('file sink: writing', () => {
  it('appends NDJSON lines grouped per rendered path, creating directories and files', async () => {
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir, { file_mode: 0o640, dir_mode: 0o750 }));
    const es = [
      entry(1, { model: 'a', time: '2026-11-22T23:59:59.5Z' }),
      entry(2, { model: 'b', time: '2026-11-22T10:00:00Z' }),
      entry(3, { model: 'a', time: '2026-11-23T00:00:00.000000001Z', log: 'line 3\nwith a second line' }),
      entry(4, { model: 'a', time: '2026-11-22T23:59:59.9Z' }),
    ];
    await scratch.deliver(sink, store, batchOf(es));
    expect(readTree(scratch.dir)).toEqual({
      'a/2026-11-22.ndjson': entryToNdjson(es[0]!) + entryToNdjson(es[3]!),
      'a/2026-11-23.ndjson': entryToNdjson(es[2]!),
      'b/2026-11-22.ndjson': entryToNdjson(es[1]!),
    });
    expect(statSync(join(scratch.dir, 'a/2026-11-22.ndjson')).mode & 0o777).toBe(0o640 & ~process.umask());
    expect(statSync(join(scratch.dir, 'a')).mode & 0o777).toBe(0o750 & ~process.umask());
    const state = JSON.parse(store.state!) as { seq: number; files: Record<string, { off: number }> };
    expect(state.seq).toBe(4);
    expect(state.files[join(scratch.dir, 'a/2026-11-22.ndjson')]!.off).toBe(statSync(join(scratch.dir, 'a/2026-11-22.ndjson')).size);
  });

  it('appends to a file that existed before the first start, keeping its content', async () => {
    writeFileSync(join(scratch.dir, 'all.ndjson'), 'previous content\n');
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir, { path: join(scratch.dir, 'all.ndjson') }));
    await scratch.deliver(sink, store, batchOf(lines(2)));
    expect(readFileSync(join(scratch.dir, 'all.ndjson'), 'utf8')).toBe('previous content\n' + lines(2).map(entryToNdjson).join(''));
  });

  it('keeps the bytes of a file written before its state began, appends after them, and says so once: an error naming the file, and the count', async () => {
    // as after a state file made anew beside the files of an earlier one
    const path = join(scratch.dir, 'all.ndjson');
    writeFileSync(path, 'written under an earlier state file\n');
    utimesSync(path, new Date('2026-11-01T00:00:00Z'), new Date('2026-11-01T00:00:00Z'));
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir, { path }));
    await scratch.deliver(sink, store, batchOf(lines(2)));
    await scratch.deliver(sink, store, batchOf(lines(2, 3)));
    expect(readFileSync(path, 'utf8')).toBe('written under an earlier state file\n' + lines(4).map(entryToNdjson).join(''));
    expect(store.errors()).toEqual([expect.objectContaining({ obj: { sink: 'file', path, bytes: 36 }, msg: expect.stringMatching(/written before this sink's state began.*lines may repeat/) })]);
    expect(store.unknownBytes).toEqual([36]);
  });

  it('says nothing of a file it wrote itself, forgot when idle and writes again', async () => {
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir, { path: join(scratch.dir, '{model_id}.ndjson') }), { idleCloseMs: 1 });
    await scratch.deliver(sink, store, batchOf(lines(1, 1, { model: 'a' })));
    await new Promise((r) => setTimeout(r, 20));
    await scratch.deliver(sink, store, batchOf(lines(1, 2, { model: 'b' })));
    expect(Object.keys((JSON.parse(store.state!) as { files: object }).files)).toEqual([join(scratch.dir, 'b.ndjson')]); // a.ndjson was forgotten
    await scratch.deliver(sink, store, batchOf(lines(1, 3, { model: 'a' })));
    expect(seqsIn(scratch.dir)).toEqual([1, 2, 3]);
    expect(store.errors()).toEqual([]);
    expect(store.unknownBytes).toEqual([]);
  });

  it.each(['always', 'batch', 'never'] as const)('writes the same output with fsync %s', async (fsync) => {
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir, { fsync }));
    for (let i = 0; i < 3; i++) await scratch.deliver(sink, store, batchOf(lines(10, 1 + i * 10)));
    await sink.flush();
    expect(seqsIn(scratch.dir)).toEqual(range(1, 30));
  });

  it('keeps writing correctly with more files than open descriptors allowed', async () => {
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir), { maxOpenFiles: 2 });
    for (let b = 0; b < 5; b++) {
      const es = range(1, 12).map((i) => entry(b * 12 + i, { model: `m${i % 6}` }));
      await scratch.deliver(sink, store, batchOf(es));
    }
    expect(seqsIn(scratch.dir)).toEqual(range(1, 60));
    expect(Object.keys(readTree(scratch.dir))).toHaveLength(6);
  });

  it('does not write again the entries of a batch re-sent after ok (a commit that failed)', async () => {
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(sink, store, batchOf(lines(5)));
    await scratch.deliver(sink, store, batchOf(lines(5)));
    await scratch.deliver(sink, store, batchOf(lines(5, 3)));
    expect(seqsIn(scratch.dir)).toEqual(range(1, 7));
  });
});

describe('file sink: exactly once across a crash', () => {
  it('writes a batch replayed after a crash before its commit exactly once, even into a file the crash created', async () => {
    const store = new MemoryStore();
    const a = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(a, store, batchOf(lines(3, 1, { time: '2026-11-22T23:00:00Z' })));
    // The next batch starts a new day's file; the process dies before the commit.
    const replayed = batchOf([...lines(2, 4, { time: '2026-11-22T23:59:00Z' }), ...lines(3, 6, { time: '2026-11-23T00:01:00Z' })]);
    const lost = await a.send(replayed, signal);
    expect(lost.status).toBe('ok');
    expect(seqsIn(scratch.dir)).toEqual(range(1, 8));

    const b = await scratch.open(store, options(scratch.dir));
    expect(seqsIn(scratch.dir)).toEqual(range(1, 3));
    await scratch.deliver(b, store, replayed);
    expect(seqsIn(scratch.dir)).toEqual(range(1, 8));
    expect(readFileSync(join(scratch.dir, 'm1/2026-11-23.ndjson'), 'utf8')).toBe(lines(3, 6, { time: '2026-11-23T00:01:00Z' }).map(entryToNdjson).join(''));
  });

  it('cuts a torn last line back to the committed offset on open', async () => {
    const store = new MemoryStore();
    const a = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(a, store, batchOf(lines(3)));
    const file = join(scratch.dir, 'm1/2026-11-22.ndjson');
    const committed = readFileSync(file, 'utf8');
    appendFileSync(file, '{"model_id":"m1","time":"2026-11-22T10:00:00Z","str');
    await scratch.open(store, options(scratch.dir));
    expect(readFileSync(file, 'utf8')).toBe(committed);
    expect(store.errors()).toEqual([]);
  });

  it('cuts complete lines written but never committed', async () => {
    const store = new MemoryStore();
    const a = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(a, store, batchOf(lines(3)));
    await a.send(batchOf(lines(3, 4)), signal);
    await a.send(batchOf(lines(3, 7)), signal);
    expect(seqsIn(scratch.dir)).toEqual(range(1, 9));
    const b = await scratch.open(store, options(scratch.dir));
    expect(seqsIn(scratch.dir)).toEqual(range(1, 3));
    await scratch.deliver(b, store, batchOf(lines(6, 4)));
    expect(seqsIn(scratch.dir)).toEqual(range(1, 9));
  });

  it('logs an error and continues from the end of a file shorter than committed', async () => {
    const store = new MemoryStore();
    const a = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(a, store, batchOf(lines(3)));
    const file = join(scratch.dir, 'm1/2026-11-22.ndjson');
    truncateSync(file, entryToNdjson(entry(1)).length);
    const b = await scratch.open(store, options(scratch.dir));
    expect(store.errors()).toHaveLength(1);
    expect(store.errors()[0]!.msg).toMatch(/shorter than committed/);
    await scratch.deliver(b, store, batchOf(lines(2, 4)));
    expect(seqsIn(scratch.dir)).toEqual([1, 4, 5]);
  });

  it('starts a committed file that was deleted again, logging an error', async () => {
    const store = new MemoryStore();
    const a = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(a, store, batchOf(lines(3)));
    rmSync(join(scratch.dir, 'm1/2026-11-22.ndjson'));
    const b = await scratch.open(store, options(scratch.dir));
    expect(store.errors()[0]!.msg).toMatch(/missing/);
    await scratch.deliver(b, store, batchOf(lines(1, 4)));
    expect(seqsIn(scratch.dir)).toEqual([4]);
  });

  it('records an adopted shorter file at once, so a crash in the next batch still replays it exactly once', async () => {
    const store = new MemoryStore();
    const a = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(a, store, batchOf(lines(3)));
    rmSync(join(scratch.dir, 'm1/2026-11-22.ndjson'));
    const b = await scratch.open(store, options(scratch.dir));
    const replayed = batchOf(lines(2, 4));
    expect((await b.send(replayed, signal)).status).toBe('ok');
    const c = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(c, store, replayed);
    expect(seqsIn(scratch.dir)).toEqual([4, 5]);
  });

  it('rejects a stored state that is not its own', async () => {
    const store = new MemoryStore();
    store.state = '{"cursor": 3}';
    await expect(createFileSink(options(scratch.dir), store.ctx())).rejects.toThrow(/stored state is unusable/);
  });
});

describe('file sink: errors and lifecycle', () => {
  it('reports retry, without throwing, when the directory cannot be created', async () => {
    writeFileSync(join(scratch.dir, 'blocker'), '');
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir, { path: join(scratch.dir, 'blocker/{model_id}.ndjson') }));
    const out = await sink.send(batchOf(lines(1)), signal);
    expect(out).toMatchObject({ status: 'retry', afterMs: expect.any(Number) as number, error: expect.stringMatching(/ENOTDIR|EEXIST/) as string });
    expect(store.errors()).toHaveLength(1);
    await sink.send(batchOf(lines(1)), signal);
    expect(store.errors()).toHaveLength(1);
    expect(await sink.healthcheck()).toMatchObject({ ok: false, detail: expect.stringMatching(/not a directory/) as string });
  });

  it('reports healthy when the nearest existing directory is writable', async () => {
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir, { path: join(scratch.dir, 'not/yet/{model_id}.ndjson') }));
    expect(await sink.healthcheck()).toEqual({ ok: true, detail: `${scratch.dir} is writable` });
  });

  it('returns the same promise from every close, and refuses batches after it', async () => {
    const store = new MemoryStore();
    const sink = await scratch.open(store, options(scratch.dir));
    await scratch.deliver(sink, store, batchOf(lines(1)));
    const first = sink.close();
    expect(sink.close()).toBe(first);
    await first;
    expect((await sink.send(batchOf(lines(1, 2)), signal)).status).toBe('retry');
  });
});
