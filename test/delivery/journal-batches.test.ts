// Batches read from the journal: their NDJSON lines are the journal's, entries are the same
// lines as objects (built only when a sink reads them), a model filter keeps whole runs of
// its models, and a rejected batch reaches the dead-letter table with all its entries.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sink, SinkBatch, SendOutcome } from '../../src/sinks/contract.js';
import { entryToNdjson } from '../../src/records/ndjson.js';
import { TestJournal, startDelivery, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
beforeEach(() => {
  tmp = tempDir('mls-journal-batches-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
});
afterEach(() => {
  journal.close();
  tmp.remove();
});

function sinkThat(outcome: (batch: SinkBatch) => SendOutcome) {
  const sent: SinkBatch[] = [];
  const sink: Sink = {
    healthcheck: async () => ({ ok: true }),
    send: async (batch) => {
      sent.push(batch);
      return outcome(batch);
    },
    flush: async () => {},
    close: async () => {},
  };
  return { sink, sent };
}

describe('batches read from the journal', () => {
  it('carry the journal lines of exactly their entries, and the entries as objects on demand', async () => {
    journal.sink('s');
    journal.append('a', 7);
    journal.append('b', 5);
    const { sink, sent } = sinkThat(() => ({ status: 'ok' }));
    const delivery = startDelivery(journal, 's', sink, testSettings({ maxEntries: 4 }));
    await waitUntil(() => journal.sink('s').cursor === 12, 'everything delivered');
    await delivery.stop();
    expect(sent.map((b) => [b.firstSeq, b.lastSeq])).toEqual([
      [1, 4],
      [5, 8],
      [9, 12],
    ]);
    const all = journal.store.readAfter(0, 100);
    for (const b of sent) {
      const entries = all.filter((e) => e.seq >= b.firstSeq && e.seq <= b.lastSeq);
      expect(b.entries).toEqual(entries);
      expect(Buffer.concat(b.ndjson!.map((c) => c.bytes)).toString()).toBe(entries.map(entryToNdjson).join(''));
      for (const c of b.ndjson!) {
        expect(c.timesNs.length).toBe(c.bytes.toString().split('\n').length - 1);
        expect([...c.timesNs]).toEqual(entries.filter((e) => e.seq >= c.firstSeq && e.seq < c.firstSeq + c.timesNs.length).map((e) => e.timeNs));
      }
    }
    // the batch that spans both models has one chunk per model
    expect(sent[1]!.ndjson!.map((c) => [c.modelId, c.firstSeq, c.timesNs.length])).toEqual([
      ['a', 5, 3],
      ['b', 8, 1],
    ]);
  });

  it('keep only the configured models, and skip batches with none of them', async () => {
    journal.sink('s');
    journal.append('a', 3);
    journal.append('b', 3);
    journal.append('a', 2);
    const { sink, sent } = sinkThat(() => ({ status: 'ok' }));
    const delivery = startDelivery(journal, 's', sink, testSettings({ maxEntries: 3, models: new Set(['a']) }));
    await waitUntil(() => journal.sink('s').cursor === 8, 'everything passed');
    await delivery.stop();
    expect(sent.map((b) => b.entries.map((e) => e.seq))).toEqual([[1, 2, 3], [7, 8]]);
    expect(sent.flatMap((b) => b.ndjson!.map((c) => c.modelId))).toEqual(['a', 'a']);
    expect(journal.sink('s').delivered).toBe(5);
  });

  it('dead-letter a rejected batch with every entry', async () => {
    journal.sink('s');
    journal.append('a', 3);
    const { sink } = sinkThat(() => ({ status: 'reject', error: 'HTTP 400' }));
    const delivery = startDelivery(journal, 's', sink, testSettings({ maxEntries: 10 }));
    await waitUntil(() => journal.sink('s').cursor === 3, 'the batch dead-lettered');
    await delivery.stop();
    const [dead] = journal.store.listDeadLetters('s');
    expect(dead!.entries).toEqual(journal.store.readAfter(0, 10));
  });
});

describe('flushSoon', () => {
  it('sends the partial batch at the end at once, even behind full batches', async () => {
    journal.sink('s');
    journal.append('a', 25);
    const { sink, sent } = sinkThat(() => ({ status: 'ok' }));
    const delivery = startDelivery(journal, 's', sink, testSettings({ maxEntries: 10, maxDelayMs: 60_000 }));
    await waitUntil(() => journal.sink('s').cursor === 20, 'the full batches');
    await new Promise((r) => setTimeout(r, 100));
    // the last 5 wait for max_delay (a minute) until a poll says no more are coming
    expect(journal.sink('s').cursor).toBe(20);
    journal.append('a', 12);
    delivery.flushSoon();
    await waitUntil(() => journal.sink('s').cursor === 37, 'everything, without waiting a minute', 5_000);
    await delivery.stop();
    expect(sent.map((b) => [b.firstSeq, b.lastSeq])).toEqual([
      [1, 10],
      [11, 20],
      [21, 30],
      [31, 37],
    ]);
  });

  it('gathers the partial batches of polls that end close together into one, never past max_delay', async () => {
    journal.sink('s');
    const { sink, sent } = sinkThat(() => ({ status: 'ok' }));
    const delivery = startDelivery(journal, 's', sink, testSettings({ maxEntries: 100, maxDelayMs: 60_000, flushGatherMs: 1_500 }));
    journal.append('a', 3);
    delivery.flushSoon();
    // The first goes at once: no batch went before it.
    await waitUntil(() => journal.sink('s').cursor === 3, 'the first poll\'s entries', 1_000);
    journal.append('b', 2);
    delivery.flushSoon();
    await new Promise((r) => setTimeout(r, 100));
    // Within the gathering time of the batch before: held, and joined by the next poll's.
    expect(journal.sink('s').cursor).toBe(3);
    journal.append('c', 2);
    delivery.flushSoon();
    await waitUntil(() => journal.sink('s').cursor === 7, 'both later polls\' entries', 5_000);
    // max_delay bounds the gathering: with 50 ms, the next partial batch does not wait 1.5 s.
    await delivery.stop();
    const quick = startDelivery(journal, 's', sink, testSettings({ maxEntries: 100, maxDelayMs: 50, flushGatherMs: 60_000 }));
    journal.append('d', 1);
    quick.flushSoon();
    await waitUntil(() => journal.sink('s').cursor === 8, 'the entry after max_delay', 5_000);
    await quick.stop();
    expect(sent.map((b) => [b.firstSeq, b.lastSeq])).toEqual([
      [1, 3],
      [4, 7],
      [8, 8],
    ]);
  });
});
