//! The stdout sink: lines, backpressure, a reader that has gone away.
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { entryToNdjson } from '../../src/records/ndjson.js';
import { createStdoutSink } from '../../src/sinks/stdout/index.js';
import { batchOf, entry, MemoryStore, withNdjson } from './file/helpers.js';

const signal = new AbortController().signal;

function collect(stream: PassThrough): () => string {
  let text = '';
  stream.setEncoding('utf8').on('data', (d: string) => (text += d));
  return () => text;
}

describe('stdout sink', () => {
  it('writes one NDJSON line per entry, in order', async () => {
    const stream = new PassThrough();
    const text = collect(stream);
    const sink = createStdoutSink({}, new MemoryStore().ctx(), stream);
    const es = [entry(1, { log: 'a\nb' }), entry(2, { log: '日本語 🦙' }), entry(3, { log: '' })];
    expect(await sink.send(batchOf(es), signal)).toEqual({ status: 'ok' });
    expect(await sink.send(batchOf([entry(4)]), signal)).toEqual({ status: 'ok' });
    expect(text()).toBe([...es, entry(4)].map(entryToNdjson).join(''));
    await sink.close();
  });

  it('writes the NDJSON lines of batches read from the journal as they are', async () => {
    const stream = new PassThrough();
    const text = collect(stream);
    const sink = createStdoutSink({}, new MemoryStore().ctx(), stream);
    const es = [entry(1, { model: 'a' }), entry(2, { model: 'b', log: 'x\ny' }), entry(3, { model: 'a' })];
    const batch = withNdjson(es);
    batch.ndjson![1]!.bytes = Buffer.from(batch.ndjson![1]!.bytes.toString().replace('x\\ny', 'from the text'));
    expect(await sink.send(batch, signal)).toEqual({ status: 'ok' });
    expect(text()).toBe(entryToNdjson(es[0]!) + entryToNdjson({ ...es[1]!, log: 'from the text' }) + entryToNdjson(es[2]!));
    await sink.close();
  });

  it('acknowledges a batch only once a slow reader has taken it', async () => {
    const taken: Array<() => void> = [];
    let received = '';
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _enc, cb) {
        received += chunk.toString();
        taken.push(cb);
      },
    });
    const sink = createStdoutSink({ format: 'ndjson' }, new MemoryStore().ctx(), slow);
    let settled = false;
    const sent = sink.send(batchOf([entry(1), entry(2)]), signal).then((o) => {
      settled = true;
      return o;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(received).toBe(entryToNdjson(entry(1)) + entryToNdjson(entry(2)));
    expect(settled).toBe(false);
    taken.shift()!();
    expect(await sent).toEqual({ status: 'ok' });
  });

  it('reports retry and logs one error when the reader has gone (EPIPE)', async () => {
    const broken = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const store = new MemoryStore();
    const sink = createStdoutSink({}, store.ctx(), broken);
    expect(await sink.send(batchOf([entry(1)]), signal)).toMatchObject({ status: 'retry', afterMs: 5_000, error: 'write EPIPE' });
    expect(await sink.send(batchOf([entry(1)]), signal)).toMatchObject({ status: 'retry' });
    expect(store.errors()).toHaveLength(1);
    expect(store.errors()[0]!.obj).toMatchObject({ code: 'EPIPE' });
    expect(await sink.healthcheck()).toMatchObject({ ok: false });
  });

  it('returns the same promise from every close', async () => {
    const sink = createStdoutSink({}, new MemoryStore().ctx(), new PassThrough());
    const first = sink.close();
    expect(sink.close()).toBe(first);
    await first;
    expect((await sink.send(batchOf([entry(1)]), signal)).status).toBe('retry');
  });
});
