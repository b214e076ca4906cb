//! The conformance suite with batches of processed records (`recordBatch`, as the delivery
//! loop sends them with processing on): each sink type delivers exactly those records with
//! their fields (level, lines and end time of a traceback, a JSON line's message,
//! attributes and trace ids), retries through its destination's failures until each
//! arrives, refuses for good what the destination rejects, delivers every record across a
//! crash before the acknowledgement and a reopen (the file sink exactly once: the replayed
//! batch is written again after its file is cut back), and closes idempotently. Batches go
//! straight to the sink; an `ok` state is committed as the delivery loop commits it.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SendOutcome, Sink, SinkBatch } from '../../src/sinks/contract.js';
import { TestJournal, contextFor, tempDir } from '../helpers/delivery.js';
import { CASES, type Destination } from './conformance/cases.js';
import { processedBatch } from './conformance/records.js';

const signal = new AbortController().signal;

function sorted(lines: readonly string[]): string[] {
  return [...lines].sort();
}

describe.each(CASES)('$type sink conformance with processed records', (c) => {
  const name = c.type;
  let tmp: ReturnType<typeof tempDir>;
  let journal: TestJournal;
  let dest: Destination;
  let sinks: Sink[] = [];

  /** What batches 1..n must deliver, one line per record. */
  const expected = (...batches: Array<1 | 2 | 3>): string[] => sorted(batches.flatMap((n) => processedBatch(n).records.map(c.recordLine)));
  const batch = (n: 1 | 2 | 3): SinkBatch => processedBatch(n).batch;

  beforeEach(async () => {
    tmp = tempDir(`mls-conf-records-${c.type}-`);
    journal = new TestJournal(join(tmp.dir, 'state.db'));
    journal.sink(name);
    dest = await c.open(tmp.dir);
    sinks = [];
  });

  afterEach(async () => {
    for (const s of sinks) await s.close();
    await dest.close();
    journal.close();
    tmp.remove();
  });

  async function build(): Promise<Sink> {
    const sink = await dest.build(contextFor(journal, name));
    sinks.push(sink);
    return sink;
  }

  /** One send; with `commit`, an `ok`'s state is committed as the loop commits it with the cursor. */
  async function send(sink: Sink, b: SinkBatch, commit = true): Promise<SendOutcome> {
    const outcome = await sink.send(b, signal);
    if (commit && outcome.status === 'ok' && outcome.state !== undefined) journal.store.setSinkState(name, outcome.state);
    return outcome;
  }

  /** Sends batch `n` (rebuilt each time, as after a retry) until it is acknowledged; returns the failed sends. */
  async function sendUntilOk(sink: Sink, n: 1 | 2 | 3): Promise<number> {
    for (let failed = 0; failed < 200; failed++) {
      const outcome = await send(sink, batch(n));
      if (outcome.status === 'ok') return failed;
      expect(outcome.status).toBe('retry');
      await new Promise((r) => setTimeout(r, Math.min(200, (outcome.status === 'retry' && outcome.afterMs) || 20)));
    }
    throw new Error(`batch ${n} was never acknowledged`);
  }

  it('delivers each processed record once, with its fields', async () => {
    const sink = await build();
    for (const n of [1, 2, 3] as const) expect(await send(sink, batch(n))).toMatchObject({ status: 'ok' });
    expect(sorted(dest.records())).toEqual(expected(1, 2, 3));
  });

  const modes = c.failureModes;
  if (modes.length > 0) it.each(modes)('retries processed records through %s until each arrives', async (mode) => {
    const failure = dest.failures[mode]!;
    const sink = await build();
    await failure.start();
    const first = await send(sink, batch(1));
    if (failure.untilStopped !== false) expect(first.status).toBe('retry');
    await failure.stop();
    if (first.status !== 'ok') await sendUntilOk(sink, 1);
    expect(await send(sink, batch(2))).toMatchObject({ status: 'ok' });
    expect(sorted(dest.recordsOnce())).toEqual(expected(1, 2));
    if (c.guarantee === 'exactly once') expect(sorted(dest.records())).toEqual(expected(1, 2));
  });

  if (c.rejects) it('refuses for good a batch of processed records the destination rejects, and delivers the next', async () => {
    const sink = await build();
    dest.rejectNext!();
    expect(await send(sink, batch(1))).toMatchObject({ status: 'reject' });
    expect(await send(sink, batch(2))).toMatchObject({ status: 'ok' });
    expect(sorted(dest.recordsOnce())).toEqual(expected(2));
  });

  it(`delivers every processed record ${c.guarantee} across a crash before the acknowledgement and a reopen`, async () => {
    const first = await build();
    expect(await send(first, batch(1))).toMatchObject({ status: 'ok' });
    // Batch 2 (whose first record began in batch 1's lines) arrives, but its acknowledgement
    // and state are lost, as in a crash between the send and the commit.
    expect(await send(first, batch(2), false)).toMatchObject({ status: 'ok' });
    expect(sorted(dest.records())).toEqual(expected(1, 2));
    await first.close();

    const second = await build();
    // The file sink has cut its files back to the committed offsets on opening.
    if (c.guarantee === 'exactly once') expect(sorted(dest.records())).toEqual(expected(1));
    expect(await send(second, batch(2))).toMatchObject({ status: 'ok' });
    expect(await send(second, batch(3))).toMatchObject({ status: 'ok' });
    if (c.guarantee === 'exactly once') expect(sorted(dest.records())).toEqual(expected(1, 2, 3));
    else expect(sorted(dest.recordsOnce())).toEqual(expected(1, 2, 3));
    expect(dest.records().length).toBeGreaterThanOrEqual(expected(1, 2, 3).length);
  });

  it('closes idempotently after processed records', async () => {
    const sink = await build();
    expect(await send(sink, batch(1))).toMatchObject({ status: 'ok' });
    const closing = sink.close();
    expect(sink.close()).toBe(closing);
    await closing;
    expect(await sink.send(batch(2), signal)).toMatchObject({ status: 'retry' });
    expect(sorted(dest.records())).toEqual(expected(1));
  });
});
