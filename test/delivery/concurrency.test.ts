// Several batches in flight for one sink: sends overlap, the cursor still moves in seq order
// (a batch acknowledged early waits for the ones before it), and a stop with batches in flight
// rebuilds exactly those batches, under the same ids, at the next start.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Sink, SinkBatch, SendOutcome } from '../../src/sinks/contract.js';
import { TestJournal, startDelivery, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
beforeEach(() => {
  tmp = tempDir('mls-concurrency-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
});
afterEach(() => {
  journal.close();
  tmp.remove();
});

/** A sink whose sends finish in a controllable order. */
function recordingSink(delayFor: (batch: SinkBatch) => number) {
  let inFlight = 0;
  const state = { maxInFlight: 0, sent: [] as SinkBatch[], acked: [] as string[] };
  const sink: Sink = {
    healthcheck: async () => ({ ok: true }),
    async send(batch, signal): Promise<SendOutcome> {
      state.sent.push(batch);
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delayFor(batch));
        signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
      inFlight--;
      if (signal.aborted) return { status: 'retry', error: 'stopped' };
      state.acked.push(...batch.entries.map((e) => e.log));
      return { status: 'ok' };
    },
    flush: async () => {},
    close: async () => {},
  };
  return { sink, state };
}

describe('delivery with concurrency > 1', () => {
  it('overlaps sends and moves the cursor only over the contiguous acknowledged prefix', async () => {
    journal.sink('hook');
    const logs = journal.append('m', 60);
    // the first batch is the slowest: later batches finish first but must not move the cursor past it
    const { sink, state } = recordingSink((b) => (b.firstSeq === 1 ? 600 : 50));
    const delivery = startDelivery(journal, 'hook', sink, testSettings({ concurrency: 4 }));
    await waitUntil(() => state.acked.length >= 30, 'the later batches');
    expect(state.maxInFlight).toBeGreaterThanOrEqual(3);
    expect(journal.sink('hook').cursor).toBe(0);
    await waitUntil(() => journal.sink('hook').cursor === 60, 'the cursor to reach the end');
    await delivery.stop();
    expect(new Set(state.acked)).toEqual(new Set(logs));
    expect(journal.sink('hook').inflightRanges).toEqual([]);
  });

  it('a stop with batches in flight rebuilds the same batches, with the same ids, at the next start', async () => {
    journal.sink('hook');
    journal.append('m', 40);
    const first = recordingSink(() => 60_000);
    const d1 = startDelivery(journal, 'hook', first.sink, testSettings({ concurrency: 3 }));
    await waitUntil(() => first.state.sent.length === 3, 'three batches in flight');
    await d1.stop();
    expect(journal.sink('hook').cursor).toBe(0);
    const ranges = journal.sink('hook').inflightRanges;
    expect(ranges).toEqual(first.state.sent.map((b) => ({ firstSeq: b.firstSeq, lastSeq: b.lastSeq, key: b.id })));

    journal.append('m', 5);
    const second = recordingSink(() => 5);
    const d2 = startDelivery(journal, 'hook', second.sink, testSettings({ concurrency: 3 }));
    await waitUntil(() => journal.sink('hook').cursor === 45, 'everything delivered');
    await d2.stop();
    expect(second.state.sent.slice(0, 3).map((b) => b.id)).toEqual(first.state.sent.map((b) => b.id));
    expect(second.state.acked).toHaveLength(45);
    expect(new Set(second.state.acked).size).toBe(45);
  });
});
