// A state write fails under the delivery loop (the disk holding the state file is full):
// the loop pauses, resumes from its committed cursor once writes succeed again, says so,
// and starts its back-off afresh for the next outage.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { pino } from 'pino';
import { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import type { Sink, SendOutcome } from '../../src/sinks/contract.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { TestJournal, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
beforeEach(() => {
  tmp = tempDir('mls-state-errors-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
});
afterEach(() => {
  vi.restoreAllMocks();
  journal.close();
  tmp.remove();
});

interface LogRecord {
  level: number;
  msg: string;
  retryInMs?: number;
}

describe('delivery when the state file cannot be written', () => {
  it('pauses, resumes from its cursor, and starts the back-off afresh for the next outage', async () => {
    // the longest pause each time, so the back-off's growth shows in retryInMs
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
    const { store } = journal;
    let full = false;
    const realAck = store.ack.bind(store);
    store.ack = (...args: Parameters<typeof store.ack>) => {
      if (full) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      return realAck(...args);
    };
    const delivered = new Set<string>();
    const sink: Sink = {
      healthcheck: async () => ({ ok: true }),
      async send(batch): Promise<SendOutcome> {
        for (const e of batch.entries) delivered.add(e.log);
        return { status: 'ok' };
      },
      flush: async () => {},
      close: async () => {},
    };
    const records: LogRecord[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) });
    journal.sink('out');
    const delivery = new SinkDelivery({ name: 'out', sink, store, metrics: new Metrics({ processMetrics: false }), logger, now: () => Date.now(), settings: testSettings() });
    void delivery.start();
    const failures = () => records.filter((r) => r.msg.includes('could not write the state file'));
    const resumed = () => records.filter((r) => r.msg === 'state file writable again; delivery resumed');

    try {
      const logs: string[] = [];
      for (const outage of [1, 2]) {
        full = true;
        logs.push(...journal.append('m', 25));
        delivery.notify();
        await waitUntil(() => failures().length === 2 * outage - 1, `outage ${outage}: the first failed write`);
        await waitUntil(() => failures().length === 2 * outage, `outage ${outage}: the second failed write`);
        full = false;
        await waitUntil(() => journal.sink('out').cursor === store.lastSeq(), `outage ${outage}: the cursor to reach the end`);
        expect(resumed()).toHaveLength(outage);
      }
      expect(new Set(logs)).toEqual(delivered);
      // each outage starts at the first step (1 s), then doubles (2 s); without the reset the
      // second outage would go on from where the first stopped
      expect(failures().map((r) => r.retryInMs)).toEqual([1_000, 2_000, 1_000, 2_000]);
      // one error line per outage (the retries in between are debug)
      expect(failures().map((r) => r.level)).toEqual([50, 20, 50, 20]);
    } finally {
      await delivery.stop();
    }
  }, 20_000);
});
