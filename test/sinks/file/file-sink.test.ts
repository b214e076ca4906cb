//! The file sink in process: writing, reconciliation after simulated crashes, rotation, gzip, errors.
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sink, SinkBatch } from '../../../src/sinks/contract.js';
import { createFileSink, type FileSinkOptions } from '../../../src/sinks/file/index.js';
import { entryToNdjson } from '../../../src/records/ndjson.js';
import { batchOf, entry, MemoryStore, options, range, readTree, seqsIn } from './helpers.js';

const signal = new AbortController().signal;
let dir: string;
const sinks: Sink[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-file-'));
});
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function open(store: MemoryStore, opts: FileSinkOptions, tuning = {}): Promise<Sink> {
  const sink = await createFileSink(opts, store.ctx(), tuning);
  sinks.push(sink);
  return sink;
}

/** Sends and commits like the delivery loop. */
async function deliver(sink: Sink, store: MemoryStore, batch: SinkBatch): Promise<void> {
  const out = await sink.send(batch, signal);
  expect(out).toMatchObject({ status: 'ok' });
  if (out.status === 'ok') store.ack(batch.lastSeq, out.state);
}

function lines(n: number, from = 1, opts: Parameters<typeof entry>[1] = {}) {
  return range(from, from + n - 1).map((s) => entry(s, opts));
}

describe('file sink: writing', () => {
  it('appends NDJSON lines grouped per rendered path, creating directories and files', async () => {
    const store = new MemoryStore();
    const sink = await open(store, options(dir, { file_mode: 0o640, dir_mode: 0o750 }));
    const es = [
      entry(1, { model: 'a', time: '2026-11-22T23:59:59.5Z' }),
      entry(2, { model: 'b', time: '2026-11-22T10:00:00Z' }),
      entry(3, { model: 'a', time: '2026-11-23T00:00:00.000000001Z', log: 'line 3\nwith a second line' }),
      entry(4, { model: 'a', time: '2026-11-22T23:59:59.9Z' }),
    ];
    await deliver(sink, store, batchOf(es));
    expect(readTree(dir)).toEqual({
      'a/2026-11-22.ndjson': entryToNdjson(es[0]!) + entryToNdjson(es[3]!),
      'a/2026-11-23.ndjson': entryToNdjson(es[2]!),
      'b/2026-11-22.ndjson': entryToNdjson(es[1]!),
    });
    expect(statSync(join(dir, 'a/2026-11-22.ndjson')).mode & 0o777).toBe(0o640 & ~process.umask());
    expect(statSync(join(dir, 'a')).mode & 0o777).toBe(0o750 & ~process.umask());
    const state = JSON.parse(store.state!) as { seq: number; files: Record<string, { off: number }> };
    expect(state.seq).toBe(4);
    expect(state.files[join(dir, 'a/2026-11-22.ndjson')]!.off).toBe(statSync(join(dir, 'a/2026-11-22.ndjson')).size);
  });

  it('appends to a file that existed before the first start, keeping its content', async () => {
    writeFileSync(join(dir, 'all.ndjson'), 'previous content\n');
    const store = new MemoryStore();
    const sink = await open(store, options(dir, { path: join(dir, 'all.ndjson') }));
    await deliver(sink, store, batchOf(lines(2)));
    expect(readFileSync(join(dir, 'all.ndjson'), 'utf8')).toBe('previous content\n' + lines(2).map(entryToNdjson).join(''));
  });

  it.each(['always', 'batch', 'never'] as const)('writes the same output with fsync %s', async (fsync) => {
    const store = new MemoryStore();
    const sink = await open(store, options(dir, { fsync }));
    for (let i = 0; i < 3; i++) await deliver(sink, store, batchOf(lines(10, 1 + i * 10)));
    await sink.flush();
    expect(seqsIn(dir)).toEqual(range(1, 30));
  });

  it('keeps writing correctly with more files than open descriptors allowed', async () => {
    const store = new MemoryStore();
    const sink = await open(store, options(dir), { maxOpenFiles: 2 });
    for (let b = 0; b < 5; b++) {
      const es = range(1, 12).map((i) => entry(b * 12 + i, { model: `m${i % 6}` }));
      await deliver(sink, store, batchOf(es));
    }
    expect(seqsIn(dir)).toEqual(range(1, 60));
    expect(Object.keys(readTree(dir))).toHaveLength(6);
  });

  it('does not write again the entries of a batch re-sent after ok (a commit that failed)', async () => {
    const store = new MemoryStore();
    const sink = await open(store, options(dir));
    await deliver(sink, store, batchOf(lines(5)));
    await deliver(sink, store, batchOf(lines(5)));
    await deliver(sink, store, batchOf(lines(5, 3)));
    expect(seqsIn(dir)).toEqual(range(1, 7));
  });
});

describe('file sink: exactly once across a crash', () => {
  it('writes a batch replayed after a crash before its commit exactly once, even into a file the crash created', async () => {
    const store = new MemoryStore();
    const a = await open(store, options(dir));
    await deliver(a, store, batchOf(lines(3, 1, { time: '2026-11-22T23:00:00Z' })));
    // The next batch starts a new day's file; the process dies before the commit.
    const replayed = batchOf([...lines(2, 4, { time: '2026-11-22T23:59:00Z' }), ...lines(3, 6, { time: '2026-11-23T00:01:00Z' })]);
    const lost = await a.send(replayed, signal);
    expect(lost.status).toBe('ok');
    expect(seqsIn(dir)).toEqual(range(1, 8));

    const b = await open(store, options(dir));
    expect(seqsIn(dir)).toEqual(range(1, 3));
    await deliver(b, store, replayed);
    expect(seqsIn(dir)).toEqual(range(1, 8));
    expect(readFileSync(join(dir, 'm1/2026-11-23.ndjson'), 'utf8')).toBe(lines(3, 6, { time: '2026-11-23T00:01:00Z' }).map(entryToNdjson).join(''));
  });

  it('cuts a torn last line back to the committed offset on open', async () => {
    const store = new MemoryStore();
    const a = await open(store, options(dir));
    await deliver(a, store, batchOf(lines(3)));
    const file = join(dir, 'm1/2026-11-22.ndjson');
    const committed = readFileSync(file, 'utf8');
    appendFileSync(file, '{"model_id":"m1","time":"2026-11-22T10:00:00Z","str');
    await open(store, options(dir));
    expect(readFileSync(file, 'utf8')).toBe(committed);
    expect(store.errors()).toEqual([]);
  });

  it('cuts complete lines written but never committed', async () => {
    const store = new MemoryStore();
    const a = await open(store, options(dir));
    await deliver(a, store, batchOf(lines(3)));
    await a.send(batchOf(lines(3, 4)), signal);
    await a.send(batchOf(lines(3, 7)), signal);
    expect(seqsIn(dir)).toEqual(range(1, 9));
    const b = await open(store, options(dir));
    expect(seqsIn(dir)).toEqual(range(1, 3));
    await deliver(b, store, batchOf(lines(6, 4)));
    expect(seqsIn(dir)).toEqual(range(1, 9));
  });

  it('logs an error and continues from the end of a file shorter than committed', async () => {
    const store = new MemoryStore();
    const a = await open(store, options(dir));
    await deliver(a, store, batchOf(lines(3)));
    const file = join(dir, 'm1/2026-11-22.ndjson');
    truncateSync(file, entryToNdjson(entry(1)).length);
    const b = await open(store, options(dir));
    expect(store.errors()).toHaveLength(1);
    expect(store.errors()[0]!.msg).toMatch(/shorter than committed/);
    await deliver(b, store, batchOf(lines(2, 4)));
    expect(seqsIn(dir)).toEqual([1, 4, 5]);
  });

  it('starts a committed file that was deleted again, logging an error', async () => {
    const store = new MemoryStore();
    const a = await open(store, options(dir));
    await deliver(a, store, batchOf(lines(3)));
    rmSync(join(dir, 'm1/2026-11-22.ndjson'));
    const b = await open(store, options(dir));
    expect(store.errors()[0]!.msg).toMatch(/missing/);
    await deliver(b, store, batchOf(lines(1, 4)));
    expect(seqsIn(dir)).toEqual([4]);
  });

  it('records an adopted shorter file at once, so a crash in the next batch still replays it exactly once', async () => {
    const store = new MemoryStore();
    const a = await open(store, options(dir));
    await deliver(a, store, batchOf(lines(3)));
    rmSync(join(dir, 'm1/2026-11-22.ndjson'));
    const b = await open(store, options(dir));
    const replayed = batchOf(lines(2, 4));
    expect((await b.send(replayed, signal)).status).toBe('ok');
    const c = await open(store, options(dir));
    await deliver(c, store, replayed);
    expect(seqsIn(dir)).toEqual([4, 5]);
  });

  it('rejects a stored state that is not its own', async () => {
    const store = new MemoryStore();
    store.state = '{"cursor": 3}';
    await expect(createFileSink(options(dir), store.ctx())).rejects.toThrow(/stored state is unusable/);
  });
});

describe('file sink: rotation', () => {
  const line = entryToNdjson(entry(1)).length;

  it('rotates before a line would take the file past max_bytes, never splitting a line', async () => {
    const store = new MemoryStore();
    const path = join(dir, 'out.ndjson');
    const sink = await open(store, options(dir, { path, rotate: { max_bytes: line * 3 } }));
    await deliver(sink, store, batchOf(lines(7)));
    store.clock += 1_000;
    await deliver(sink, store, batchOf(lines(1, 8)));
    const tree = readTree(dir);
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
    const path = join(dir, 'out.ndjson');
    const sink = await open(store, options(dir, { path, rotate: { max_age: 3_600_000 } }));
    await deliver(sink, store, batchOf(lines(2)));
    store.clock += 3_599_999;
    await deliver(sink, store, batchOf(lines(1, 3)));
    expect(Object.keys(readTree(dir))).toEqual(['out.ndjson']);
    store.clock += 1;
    await deliver(sink, store, batchOf(lines(1, 4)));
    expect(readTree(dir)).toEqual({
      'out.20261122T110000Z.ndjson': lines(3).map(entryToNdjson).join(''),
      'out.ndjson': entryToNdjson(entry(4)),
    });
  });

  it('gzips rotated files in the background once they are final', async () => {
    const store = new MemoryStore();
    const path = join(dir, 'out.ndjson');
    const sink = await open(store, options(dir, { path, rotate: { max_bytes: line * 4 }, compress: 'gzip' }));
    await deliver(sink, store, batchOf(lines(10)));
    await deliver(sink, store, batchOf(lines(1, 11)));
    await sink.close();
    const names = readdirSync(dir).sort();
    expect(names).toEqual(['out.20261122T100000Z.1.ndjson.gz', 'out.20261122T100000Z.ndjson.gz', 'out.ndjson']);
    const tree = readTree(dir);
    expect(tree['out.20261122T100000Z.ndjson.gz']).toBe(lines(4).map(entryToNdjson).join(''));
    expect(tree['out.20261122T100000Z.1.ndjson.gz']).toBe(lines(4, 5).map(entryToNdjson).join(''));
    expect(seqsIn(dir)).toEqual(range(1, 11));
    // The compressed files leave the state with the next commit.
    const b = await open(store, options(dir, { path, rotate: { max_bytes: line * 4 }, compress: 'gzip' }));
    await deliver(b, store, batchOf(lines(1, 12)));
    const pending = (JSON.parse(store.state!) as { rotated: { path: string }[] }).rotated.map((r) => r.path);
    expect(pending).not.toContain(join(dir, 'out.20261122T100000Z.ndjson'));
    expect(pending).not.toContain(join(dir, 'out.20261122T100000Z.1.ndjson'));
    expect(seqsIn(dir)).toEqual(range(1, 12));
    expect(store.errors()).toEqual([]);
  });

  it('compresses at the next open what a crash left uncompressed, replacing a partial temporary file', async () => {
    const store = new MemoryStore();
    const path = join(dir, 'out.ndjson');
    const opts = options(dir, { path, rotate: { max_bytes: line * 4 }, compress: 'gzip' });
    const a = await open(store, opts);
    await deliver(a, store, batchOf(lines(6)));
    const rotated = join(dir, 'out.20261122T100000Z.ndjson');
    expect(existsSync(rotated)).toBe(true);
    writeFileSync(rotated + '.gz.tmp', gzipSync('partial').subarray(0, 10));
    const b = await open(store, opts);
    await b.close();
    expect(readdirSync(dir).sort()).toEqual(['out.20261122T100000Z.ndjson.gz', 'out.ndjson']);
    expect(seqsIn(dir)).toEqual(range(1, 6));
  });

  it('completes at open a rotation that was committed but not done', async () => {
    const store = new MemoryStore();
    const path = join(dir, 'out.ndjson');
    const opts = options(dir, { path, rotate: { max_bytes: line * 3 } });
    const a = await open(store, opts);
    await deliver(a, store, batchOf(lines(3)));
    store.crashAfterCommitState = true;
    const replayed = batchOf(lines(2, 4));
    expect((await a.send(replayed, signal)).status).toBe('retry');
    store.crashAfterCommitState = false;
    expect(readdirSync(dir)).toEqual(['out.ndjson']);

    const b = await open(store, opts);
    expect(readdirSync(dir).sort()).toEqual(['out.20261122T100000Z.ndjson']);
    await deliver(b, store, replayed);
    expect(readTree(dir)).toEqual({
      'out.20261122T100000Z.ndjson': lines(3).map(entryToNdjson).join(''),
      'out.ndjson': lines(2, 4).map(entryToNdjson).join(''),
    });
  });

  it('cuts both files back when a crash follows a rotation inside an uncommitted batch', async () => {
    const store = new MemoryStore();
    const path = join(dir, 'out.ndjson');
    const opts = options(dir, { path, rotate: { max_bytes: line * 3 } });
    const a = await open(store, opts);
    await deliver(a, store, batchOf(lines(2)));
    // Seq 3 fills the file, 4 and 5 go to a new one: the rotation is committed, the batch is not.
    const replayed = batchOf(lines(3, 3));
    expect((await a.send(replayed, signal)).status).toBe('ok');
    expect(seqsIn(dir)).toEqual(range(1, 5));

    const b = await open(store, opts);
    expect(seqsIn(dir)).toEqual(range(1, 2));
    await deliver(b, store, replayed);
    expect(seqsIn(dir)).toEqual(range(1, 5));
    const tree = readTree(dir);
    expect(tree['out.20261122T100000Z.ndjson']).toBe(lines(2).map(entryToNdjson).join(''));
    expect(tree['out.ndjson']).toBe(lines(3, 3).map(entryToNdjson).join(''));
  });
});

describe('file sink: errors and lifecycle', () => {
  it('reports retry, without throwing, when the directory cannot be created', async () => {
    writeFileSync(join(dir, 'blocker'), '');
    const store = new MemoryStore();
    const sink = await open(store, options(dir, { path: join(dir, 'blocker/{model_id}.ndjson') }));
    const out = await sink.send(batchOf(lines(1)), signal);
    expect(out).toMatchObject({ status: 'retry', afterMs: expect.any(Number) as number, error: expect.stringMatching(/ENOTDIR|EEXIST/) as string });
    expect(store.errors()).toHaveLength(1);
    await sink.send(batchOf(lines(1)), signal);
    expect(store.errors()).toHaveLength(1);
    expect(await sink.healthcheck()).toMatchObject({ ok: false, detail: expect.stringMatching(/not a directory/) as string });
  });

  it('reports healthy when the nearest existing directory is writable', async () => {
    const store = new MemoryStore();
    const sink = await open(store, options(dir, { path: join(dir, 'not/yet/{model_id}.ndjson') }));
    expect(await sink.healthcheck()).toEqual({ ok: true, detail: `${dir} is writable` });
  });

  it('returns the same promise from every close, and refuses batches after it', async () => {
    const store = new MemoryStore();
    const sink = await open(store, options(dir));
    await deliver(sink, store, batchOf(lines(1)));
    const first = sink.close();
    expect(sink.close()).toBe(first);
    await first;
    expect((await sink.send(batchOf(lines(1, 2)), signal)).status).toBe('retry');
  });
});
