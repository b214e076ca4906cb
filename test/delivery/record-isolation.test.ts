// One record can never fail a batch: a record a sink cannot encode (even as plain text) is
// set aside and dead-lettered alone, with the reason, while the rest of its batch is
// delivered and the cursor moves on; the NDJSON of processed batches falls back to a
// record's plain text, then sets it aside. Dead letters, their log line and `mls dlq list`
// all count journal entries (a traceback record holds several).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { pino } from 'pino';
import { recordBatch } from '../../src/delivery/batch.js';
import { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import type { ModelProgress } from '../../src/delivery/processing/stage.js';
import type { SendOutcome, Sink, SinkBatch, SinkEntry } from '../../src/sinks/contract.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { TestJournal, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
let delivery: SinkDelivery | undefined;
beforeEach(() => {
  tmp = tempDir('mls-isolation-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
});
afterEach(async () => {
  await delivery?.stop();
  delivery = undefined;
  journal.close();
  tmp.remove();
});

const idle: ModelProgress = { watermarkNs: () => undefined, journaledThrough: () => 0, stopped: () => false };
const TRACEBACK = ['ERROR:app:poison request', 'Traceback (most recent call last):', '  File "/app/x.py", line 1, in f', 'ValueError: poison'];

/** Runs sink `hook`, with the default processing, whose every send ends as `send` says; returns what it logged and the metrics. */
function run(send: (batch: SinkBatch) => SendOutcome) {
  const logs: Array<{ level: number; msg: string; entries?: number; error?: string; seq?: number }> = [];
  const metrics = new Metrics({ processMetrics: false });
  journal.sink('hook');
  const sink: Sink = { healthcheck: async () => ({ ok: true }), send: async (batch) => send(batch), flush: async () => {}, close: async () => {} };
  delivery = new SinkDelivery({
    name: 'hook',
    sink,
    store: journal.store,
    metrics,
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) }),
    now: () => Date.now() + 60_000,
    settings: testSettings({ maxEntries: 100 }),
    processing: { processor: {}, raw: false, progress: idle },
  });
  void delivery.start();
  delivery.notify();
  return { logs, metrics };
}

/** Journal entries, per record, of the dead letters of `hook`, as `mls dlq list` counts them. */
const listed = () => journal.store.listDeadLetters('hook').map((d) => [d.count, d.entries.map((e) => e.log), d.error]);

describe('a record its sink cannot encode', () => {
  it('is dead-lettered alone with the reason, its batch delivered and the cursor moved on', async () => {
    const delivered: string[] = [];
    const { logs, metrics } = run((batch) => {
      for (const e of batch.entries) {
        if (e.log.includes('poison')) batch.setAside!(e, 'the receiver cannot take this record');
        else delivered.push(e.log);
      }
      return { status: 'ok' };
    });
    journal.appendLines('m', ['INFO: one', ...TRACEBACK, 'INFO: two', 'plain poison']);
    await waitUntil(() => journal.store.getSink('hook')!.cursor === journal.store.lastSeq(), 'the cursor at the end');
    expect(delivered).toEqual(['INFO: one', 'INFO: two']);
    expect(listed()).toEqual([
      [4, [TRACEBACK.join('\n')], 'the receiver cannot take this record'],
      [1, ['plain poison'], 'the receiver cannot take this record'],
    ]);
    // The log line counts what `mls dlq list` counts: journal entries.
    const said = logs.filter((l) => l.msg.startsWith('sink could not encode a record'));
    expect(said.map((l) => [l.level, l.entries])).toEqual([[50, 4]]);
    expect((await metrics.registry.getSingleMetric('mls_sink_dead_letters_total')!.get()).values[0]!.value).toBe(5);
    expect((await metrics.registry.getSingleMetric('mls_sink_delivered_total')!.get()).values[0]!.value).toBe(2);
  });

  it('a rejected batch: the log line and the dead letter count the same journal entries', async () => {
    const { logs } = run(() => ({ status: 'reject', error: 'HTTP 400' }));
    journal.appendLines('m', ['INFO: one', ...TRACEBACK, 'INFO: two']);
    await waitUntil(() => journal.store.getSink('hook')!.cursor === journal.store.lastSeq(), 'the cursor at the end');
    const dead = journal.store.listDeadLetters('hook');
    expect(dead.map((d) => [d.count, d.entries.length])).toEqual([[6, 3]]);
    expect(logs.find((l) => l.msg.startsWith('sink rejected a batch'))?.entries).toBe(6);
  });
});

describe('the NDJSON of a processed batch', () => {
  const record = (seq: number, over: Partial<SinkEntry>): SinkEntry => ({ seq, modelId: 'm', time: `t${seq}`, timeNs: BigInt(seq), stream: 'stdout', log: `line ${seq}`, fetchedAtMs: 0, ...over });
  let deep: Record<string, unknown> = { v: 1 };
  for (let i = 0; i < 10_000; i++) deep = { a: deep };

  it('writes a record it cannot write whole as plain text, and sets aside one it cannot write at all', () => {
    const unwritable = record(3, { time: 3n as unknown as string });
    const batch = recordBatch('id', 1, 4, [record(1, {}), record(2, { message: 'm', attributes: deep, level: 'info' }), unwritable, record(4, { level: 'warn' })]);
    const lines = batch.ndjson!.map((c) => c.bytes.toString()).join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      { model_id: 'm', time: 't1', stream: 'stdout', log: 'line 1' },
      { model_id: 'm', time: 't2', stream: 'stdout', log: 'line 2', level: 'info' },
      { model_id: 'm', time: 't4', stream: 'stdout', log: 'line 4', level: 'warn' },
    ]);
    expect(batch.ndjson!.flatMap((c) => [...c.timesNs])).toEqual([1n, 2n, 4n]);
    expect([...(batch as unknown as { aside: Map<SinkEntry, string> }).aside]).toEqual([[unwritable, expect.stringContaining('the record cannot be written as JSON')]]);
  });
});
