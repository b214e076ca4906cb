import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SinkDelivery } from '../../../src/delivery/sink-delivery.js';
import { StateStore, type PreparedEntry } from '../../../src/journal/store.js';
import type { Sink } from '../../../src/sinks/contract.js';
import { createOtlpSink } from '../../../src/sinks/otlp/index.js';
import { Metrics } from '../../../src/telemetry/metrics.js';
import { parseEntryTime } from '../../../src/time/timestamp.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { capturingLogger, context, otlpConfig } from './helpers.js';

const MODEL = 'model-a';

function timeOf(i: number): string {
  return `2026-11-22T10:00:00.${String(i).padStart(9, '0')}Z`;
}

async function waitFor(cond: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['http/protobuf', 'http/json', 'grpc'] as const)('OTLP sink behind the delivery loop (%s)', (protocol) => {
  let dir: string;
  let store: StateStore;
  let receiver: OtlpReceiver;
  let fetchId: number;
  const capture = capturingLogger();
  const running: Array<{ delivery: SinkDelivery; sink: Sink }> = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mls-otlp-'));
    store = StateStore.open(join(dir, 'state.db'));
    store.ensureCheckpoint(MODEL, 0);
    fetchId = store.beginWindow(MODEL, 0, Date.parse('2027-01-01T00:00:00Z')).fetchId;
    store.ensureSink('otel');
    receiver = await startOtlpReceiver({ protocol: protocol === 'grpc' ? 'grpc' : 'http' });
  });
  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.delivery.stop();
      await r.sink.close();
    }
    await receiver.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function append(from: number, to: number): number {
    const page: PreparedEntry[] = [];
    for (let i = from; i <= to; i++) {
      const parsed = parseEntryTime(timeOf(i));
      if (!parsed.ok) throw new Error('bad time');
      page.push({ entry: { time: timeOf(i), log: `line ${i}`, stream: i % 3 ? 'stdout' : 'stderr' }, timeNs: parsed.ns, hash: i });
    }
    return store.commitPage(MODEL, fetchId, 0, page, { nextToken: `after-${to}` }, Date.now()).lastSeq!;
  }

  async function startDelivery(): Promise<SinkDelivery> {
    const sink = await createOtlpSink(otlpConfig({ endpoint: receiver.endpoint, protocol, timeout: '500ms', headers: { 'X-Api-Key': 'delivery-secret-91c2' } }), context(capture.logger));
    const delivery = new SinkDelivery({
      name: 'otel',
      sink,
      settings: { maxEntries: 5, maxBytes: 1_000_000, maxDelayMs: 20, retryBaseMs: 50, retryMaxMs: 300, models: undefined },
      store,
      metrics: new Metrics({ processMetrics: false }),
      logger: capture.logger,
      now: Date.now,
    });
    running.push({ delivery, sink });
    void delivery.start();
    return delivery;
  }

  it('delivers every entry exactly once across a receiver outage, failures and a restart of the sink', async () => {
    append(1, 20);
    const first = await startDelivery();
    first.notify();
    await waitFor(() => receiver.logRecords().length >= 5);

    await receiver.setDown(true);
    append(21, 40);
    first.notify();
    await waitFor(() => first.attempts >= 2);

    // Stop and rebuild the sink while a batch is unacknowledged: it is sent again from the journal.
    const stopped = running.shift()!;
    await stopped.delivery.stop();
    await stopped.sink.close();
    expect(store.getSink('otel')!.inflight).toBeDefined();

    const last = append(41, 50);
    receiver.failNext(500, 2);
    await receiver.setDown(false);
    const second = await startDelivery();
    second.notify();
    await waitFor(() => store.getSink('otel')!.cursor === last);

    const got = receiver.logRecords();
    expect(got.map((r) => r.body)).toEqual(Array.from({ length: 50 }, (_, i) => `line ${i + 1}`));
    expect(got.map((r) => r.timeUnixNano)).toEqual(Array.from({ length: 50 }, (_, i) => 1795341600000000000n + BigInt(i + 1)));
    expect(store.listDeadLetters('otel')).toEqual([]);
    expect(capture.text()).not.toContain('delivery-secret-91c2');
  });

  it('dead-letters a batch the receiver refuses and carries on with the next', async () => {
    const last = append(1, 10);
    receiver.failNext(400, 1);
    const delivery = await startDelivery();
    delivery.notify();
    await waitFor(() => store.getSink('otel')!.cursor === last);
    const dead = store.listDeadLetters('otel');
    expect(dead).toHaveLength(1);
    expect(dead[0]!.entries.map((e) => e.log)).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    expect(receiver.logRecords().map((r) => r.body)).toEqual(['line 6', 'line 7', 'line 8', 'line 9', 'line 10']);
  });
});
