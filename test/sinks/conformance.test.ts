//! One conformance suite for every sink type, driven through the real delivery loop and
//! a real state file: acknowledgement only of what arrived, retries until success without
//! loss, dead-lettering of permanent rejections, no loss across close and reopen, and an
//! idempotent close. Each sink type plugs in a destination (conformance/cases.ts). The same
//! guarantees with batches of processed records: conformance-records.test.ts.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import type { SendOutcome, Sink, SinkBatch } from '../../src/sinks/contract.js';
import { BUILTIN_SINKS } from '../../src/sinks/registry.js';
import { TestJournal, contextFor, startDelivery, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';
import { CASES, MODEL, type Destination } from './conformance/cases.js';

/** Every log of `expected` that is missing from `actual`. */
function missing(expected: readonly string[], actual: readonly string[]): string[] {
  const have = new Set(actual);
  return expected.filter((l) => !have.has(l));
}

it('has a case for every built-in sink type (src/sinks/registry.ts), and for no other', () => {
  expect(CASES.map((c) => c.type)).toEqual(BUILTIN_SINKS.map((d) => d.type));
});

describe.each(CASES)('$type sink conformance', (c) => {
  const name = c.type;
  let tmp: ReturnType<typeof tempDir>;
  let journal: TestJournal;
  let dest: Destination;
  const running: { delivery?: SinkDelivery; sinks: Sink[] } = { sinks: [] };

  beforeEach(async () => {
    tmp = tempDir(`mls-conf-${c.type}-`);
    journal = new TestJournal(join(tmp.dir, 'state.db'));
    journal.sink(name);
    dest = await c.open(tmp.dir);
    running.delivery = undefined;
    running.sinks = [];
  });

  afterEach(async () => {
    await running.delivery?.stop();
    for (const s of running.sinks) await s.close();
    await dest.close();
    journal.close();
    tmp.remove();
  });

  async function build(): Promise<Sink> {
    const sink = await dest.build(contextFor(journal, name));
    running.sinks.push(sink);
    return sink;
  }

  /**
   * Starts the loop and records, at every acknowledgement, any acknowledged entry not at the
   * destination. `failedSends` counts the sends that did not return ok: unlike the loop's
   * `attempts` and `lastError`, which a quick successful retry clears, it cannot be missed.
   */
  function deliver(sink: Sink, logs: () => readonly string[]): { delivery: SinkDelivery; violations: string[]; failedSends: () => number } {
    const violations: string[] = [];
    let failed = 0;
    const counted: Sink = {
      stableBatchIds: sink.stableBatchIds,
      healthcheck: () => sink.healthcheck(),
      send: async (batch, signal) => {
        const outcome = await sink.send(batch, signal);
        if (outcome.status !== 'ok') failed++;
        return outcome;
      },
      flush: () => sink.flush(),
      close: () => sink.close(),
    };
    const delivery = startDelivery(journal, name, counted, testSettings({ maxEntries: 10 }), () => {
      const acked = logs().slice(0, journal.store.getSink(name)!.cursor);
      violations.push(...missing(acked, dest.delivered()));
    });
    running.delivery = delivery;
    return { delivery, violations, failedSends: () => failed };
  }

  it('acknowledges only entries that reached the destination', async () => {
    const sink = await build();
    const logs = journal.append(MODEL, 45);
    const { violations } = deliver(sink, () => logs);
    await waitUntil(() => journal.sink(name).cursor === 45, 'every entry is acknowledged');
    expect(violations).toEqual([]);
    expect(missing(logs, dest.delivered())).toEqual([]);
  });

  const modes = c.failureModes;
  if (modes.length > 0) it.each(modes)('does not move the cursor while the destination fails (%s)', async (mode) => {
    expect(Object.keys(dest.failures)).toContain(mode);
    const failure = dest.failures[mode]!;
    const sink = await build();
    await failure.start();
    const logs = journal.append(MODEL, 25);
    const { violations, failedSends } = deliver(sink, () => logs);
    await waitUntil(() => failedSends() >= 1, 'a send fails', 15_000);
    if (failure.untilStopped !== false) {
      await new Promise((r) => setTimeout(r, 300));
      const row = journal.sink(name);
      expect(row.cursor).toBe(0);
      // the batch's range is recorded so a restart rebuilds it, unless the sink makes replays harmless itself
      expect(row.inflight).toEqual(sink.stableBatchIds === false ? undefined : { firstSeq: 1, lastSeq: 10, key: expect.stringMatching(/^[0-9a-f]{32}$/) as string });
    }
    expect(journal.store.listDeadLetters(name)).toEqual([]);
    await dest.failures[mode]!.stop();
    await waitUntil(() => journal.sink(name).cursor === 25, 'every entry is acknowledged after recovery', 20_000);
    expect(violations).toEqual([]);
  });

  if (modes.length > 0) it.each(modes)('retries through %s until success and loses nothing', async (mode) => {
    expect(Object.keys(dest.failures)).toContain(mode);
    const sink = await build();
    await dest.failures[mode]!.start();
    const logs = journal.append(MODEL, 25);
    const { failedSends } = deliver(sink, () => logs);
    await waitUntil(() => failedSends() >= 1, 'a send fails (and is then retried)', 15_000);
    await dest.failures[mode]!.stop();
    await waitUntil(() => journal.sink(name).cursor === 25, 'every entry is acknowledged', 20_000);
    expect(missing(logs, dest.delivered())).toEqual([]);
    expect(dest.deliveredOnce()).toEqual(logs);
    expect(journal.store.listDeadLetters(name)).toEqual([]);
  });

  if (c.rejects) it('dead-letters a permanently rejected batch with its entries, and carries on', async () => {
    const sink = await build();
    dest.rejectNext!();
    const rejected = journal.append(MODEL, 10);
    deliver(sink, () => rejected);
    await waitUntil(() => journal.store.listDeadLetters(name).length === 1, 'the batch is dead-lettered');
    const [dead] = journal.store.listDeadLetters(name);
    expect(dead).toMatchObject({ sink: name, firstSeq: 1, lastSeq: 10, count: 10 });
    expect(dead!.error).toMatch(/400/);
    expect(dead!.entries.map((e) => e.log)).toEqual(rejected);
    expect(journal.sink(name).cursor).toBe(10);
    const later = journal.append(MODEL, 5);
    running.delivery!.notify();
    await waitUntil(() => journal.sink(name).cursor === 15, 'the next batch is acknowledged');
    expect(dest.deliveredOnce()).toEqual(later);
  });

  it(`delivers every entry ${c.guarantee} across a stop, close and reopen mid-stream`, async () => {
    const first = await build();
    let sends = 0;
    let delivery: SinkDelivery | undefined;
    // After two acknowledged batches, the third reaches the destination but its
    // acknowledgement is lost, as in a crash between send and commit.
    const crashing: Sink = {
      healthcheck: () => first.healthcheck(),
      flush: () => first.flush(),
      close: () => first.close(),
      async send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> {
        const outcome = await first.send(batch, signal);
        if (outcome.status === 'ok' && ++sends === 3) {
          void delivery!.stop();
          return { status: 'retry', error: 'crashed before the acknowledgement' };
        }
        return outcome;
      },
    };
    const logs = journal.append(MODEL, 100);
    delivery = startDelivery(journal, name, crashing, testSettings({ maxEntries: 10 }));
    running.delivery = delivery;
    await waitUntil(() => sends >= 3, 'the third batch is sent');
    await delivery.stop();
    const closing = first.close();
    await closing;
    expect(journal.sink(name)).toMatchObject({ cursor: 20, inflight: { firstSeq: 21, lastSeq: 30 } });
    expect(missing(logs.slice(0, 30), dest.delivered())).toEqual([]);

    logs.push(...journal.append(MODEL, 20));
    const second = await build();
    const { violations } = deliver(second, () => logs);
    await waitUntil(() => journal.sink(name).cursor === 120, 'every entry is acknowledged after the reopen');
    expect(violations).toEqual([]);
    if (c.guarantee === 'exactly once') {
      expect(dest.delivered()).toEqual(logs);
    } else {
      expect(missing(logs, dest.delivered())).toEqual([]);
      expect(dest.deliveredOnce()).toEqual(logs);
    }
  });

  it('closes idempotently: a second call returns the same promise', async () => {
    const sink = await build();
    const logs = journal.append(MODEL, 5);
    deliver(sink, () => logs);
    await waitUntil(() => journal.sink(name).cursor === 5, 'the batch is acknowledged');
    await running.delivery!.stop();
    const first = sink.close();
    const again = sink.close();
    expect(again).toBe(first);
    await Promise.all([first, again]);
    expect(sink.close()).toBe(first);
    await sink.close();
  });
});

