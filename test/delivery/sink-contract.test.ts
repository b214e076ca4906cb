//! A custom sink that breaks its contract never ends its delivery loop: each way of
//! misbehaving becomes a retry with an error naming the sink and the fault, counted in
//! mls_sink_errors_total, and once the sink behaves every entry arrives, once. A send that
//! never settles is cut off by the sink's timeout; a loop that fails starts again.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sinkSchema } from '../../src/cli/config.js';
import type { ModuleSinkConfig } from '../../src/sinks/module/config.js';
import { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import { sinkRegistry } from '../../src/sinks/registry.js';
import type { Sink } from '../../src/sinks/contract.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { TestJournal, contextFor, silentLogger, tempDir, waitUntil } from '../helpers/delivery.js';
import { HOSTILE_MODES, writeHostileSink, type HostileMode, type HostileSinkState } from '../helpers/hostile-sink.js';

const NAME = 'plug';
const ENTRIES = 25;
/** The module's `timeout` (as the daemon passes it from the config). */
const SEND_TIMEOUT_MS = 300;

/** What lastError says while the sink misbehaves in each way. */
const EXPECTED_ERROR: Record<HostileMode, RegExp> = {
  undefined: /^sink plug broke the sink contract: send resolved to undefined instead of \{status/,
  null: /^sink plug broke the sink contract: send resolved to null instead of \{status/,
  'reject-without-error': /^sink plug broke the sink contract: send returned status 'reject' with an error that is undefined, not a string/,
  'state-not-a-string': /^sink plug broke the sink contract: send returned status 'ok' with a state that is an object, not a string/,
  'unknown-status': /^sink plug broke the sink contract: send returned status "later"; it must be 'ok', 'retry' or 'reject'/,
  'after-1e12': /^come back in 31 years$/,
  throw: /^sink plug threw instead of returning an outcome: the plugin has a bug/,
  hang: /^sink plug: send did not finish within 300ms \(its timeout\)/,
};

let tmp: ReturnType<typeof tempDir>;
let journal: TestJournal;
let modulePath: string;
const running: Array<{ delivery: SinkDelivery; sink: Sink }> = [];

beforeEach(() => {
  tmp = tempDir('mls-contract-');
  journal = new TestJournal(join(tmp.dir, 'state.db'));
  modulePath = writeHostileSink(tmp.dir);
});

afterEach(async () => {
  for (const r of running.splice(0)) {
    await Promise.race([r.delivery.stop(), new Promise((res) => setTimeout(res, 2_000))]);
    await r.sink.close();
  }
  journal.close();
  tmp.remove();
});

async function start(options: Record<string, unknown>, onAck?: () => void) {
  const config = sinkSchema.parse({ name: NAME, type: 'module', path: modulePath, options, retry: { base_delay: '20ms', max_delay: '200ms' } }) as ModuleSinkConfig;
  const sink = await sinkRegistry.build(config, contextFor(journal, NAME));
  const metrics = new Metrics({ processMetrics: false });
  const delivery = new SinkDelivery({
    name: NAME,
    sink,
    store: journal.store,
    metrics,
    logger: silentLogger(),
    now: () => Date.now(),
    settings: { maxEntries: 10, maxBytes: 1 << 20, maxDelayMs: 5, retryBaseMs: config.retry.base_delay, retryMaxMs: config.retry.max_delay, models: undefined, sendTimeoutMs: SEND_TIMEOUT_MS },
    ...(onAck ? { onAck } : {}),
  });
  running.push({ delivery, sink });
  void delivery.start();
  delivery.notify();
  const state = sink as unknown as HostileSinkState;
  const counter = async (metric: string, labels: Record<string, string>) => {
    const m = (await metrics.registry.getSingleMetric(metric)!.get()).values;
    return m.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((n, v) => n + v.value, 0);
  };
  const outcomes = async () => (await metrics.registry.getSingleMetric('mls_sink_batches_total')!.get()).values.map((v) => String(v.labels.outcome));
  return { delivery, state, counter, outcomes };
}

describe('a module sink that breaks its contract', () => {
  it.each(HOSTILE_MODES)('%s: the loop keeps going, says what is wrong, and delivers every entry once the sink behaves', { timeout: 30_000 }, async (mode) => {
    const healFile = join(tmp.dir, 'healed');
    journal.sink(NAME);
    const logs = journal.append('m1', ENTRIES);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const { delivery, state, counter, outcomes } = await start({ mode, healFile });
      // The loop went on after the bad outcome: the batch was offered again.
      await waitUntil(() => state.calls.length >= 3, 'the batch is sent again after the bad outcome');
      if (mode === 'after-1e12') {
        // A valid outcome, but its delay is clamped to retry.max_delay (200ms): no timer
        // overflow, which Node turns into a 1 ms timer, and no busy retry loop.
        const gaps = state.calls.slice(1, 3).map((t, i) => t - state.calls[i]!);
        expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
        expect(warnings).not.toContain('TimeoutOverflowWarning');
      }
      expect(delivery.lastError?.message).toMatch(EXPECTED_ERROR[mode]);
      expect(delivery.failingSinceMs).toBeDefined();
      const faults = await counter('mls_sink_errors_total', { sink: NAME });
      if (mode === 'after-1e12') expect(faults).toBe(0);
      else expect(faults).toBeGreaterThanOrEqual(1);
      if (mode === 'hang') expect(state.aborts).toBeGreaterThanOrEqual(1);
      expect(journal.sink(NAME).cursor).toBe(0);

      writeFileSync(healFile, '');
      await waitUntil(() => state.delivered.length >= ENTRIES, 'every entry is delivered once the sink behaves');
      await waitUntil(() => journal.sink(NAME).cursor === ENTRIES, 'the cursor passes every entry');
      expect(state.delivered).toEqual(logs);
      expect(journal.store.listDeadLetters(NAME)).toEqual([]);
      expect(delivery.lastError).toBeUndefined();
      expect(delivery.failingSinceMs).toBeUndefined();
      expect(new Set(await outcomes())).toEqual(new Set(['ok', 'retry']));
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('stops within its timeout while a send hangs and ignores its signal', { timeout: 30_000 }, async () => {
    journal.sink(NAME);
    journal.append('m1', 5);
    const { delivery, state } = await start({ mode: 'hang' });
    await waitUntil(() => state.calls.length >= 1, 'the first send');
    const stopped = await Promise.race([delivery.stop().then(() => true), new Promise<boolean>((res) => setTimeout(() => res(false), 10_000))]);
    expect(stopped).toBe(true);
    expect(state.aborts).toBeGreaterThanOrEqual(1);
    expect(journal.sink(NAME).cursor).toBe(0);
  });

  it('a delivery loop that fails unexpectedly starts again from its cursor and delivers everything once', { timeout: 30_000 }, async () => {
    journal.sink(NAME);
    let failures = 0;
    const { delivery, state, counter } = await start({ mode: 'undefined', badCalls: 0 }, () => {
      if (failures < 2) {
        failures++;
        throw new Error('something broke after the acknowledgement');
      }
    });
    const logs = journal.append('m1', ENTRIES);
    delivery.notify();
    await waitUntil(() => failures >= 1, 'the first loop failure');
    expect(delivery.lastError?.message).toMatch(/^delivery loop of sink plug failed: something broke after the acknowledgement/);
    for (let i = 0; i < 3; i++) {
      logs.push(...journal.append('m1', 5));
      delivery.notify();
    }
    await waitUntil(() => journal.sink(NAME).cursor === journal.store.lastSeq(), 'the cursor passes every entry');
    expect(failures).toBe(2);
    expect(state.delivered).toEqual(logs);
    expect(await counter('mls_sink_errors_total', { sink: NAME })).toBe(2);
    expect(existsSync(join(tmp.dir, 'healed'))).toBe(false);
  });
});
