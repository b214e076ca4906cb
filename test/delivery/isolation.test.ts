//! One sink's outage does not hold back the others: each has its own delivery loop and
//! cursor over the shared journal, and the lagging one catches up without loss.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sinkSchema } from '../../src/cli/config.js';
import type { FileSinkConfig } from '../../src/sinks/file/config.js';
import type { OtlpSinkConfig } from '../../src/sinks/otlp/config.js';
import type { WebhookSinkConfig } from '../../src/sinks/webhook/config.js';
import type { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import type { Sink } from '../../src/sinks/contract.js';
import { createFileSink } from '../../src/sinks/file/index.js';
import { createOtlpSink } from '../../src/sinks/otlp/index.js';
import { createWebhookSink } from '../../src/sinks/webhook/index.js';
import { TestJournal, contextFor, startDelivery, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';

/** Length of the webhook outage; the product requirement is a minute, scaled down here. */
const OUTAGE_MS = 10_000;
const MODEL = 'm1';

describe('sink isolation', () => {
  let tmp: ReturnType<typeof tempDir>;
  let journal: TestJournal;
  let hook: WebhookReceiver;
  let otlp: OtlpReceiver;
  const deliveries: SinkDelivery[] = [];
  const sinks: Sink[] = [];
  let feeder: NodeJS.Timeout | undefined;

  beforeEach(async () => {
    tmp = tempDir('mls-isolation-');
    journal = new TestJournal(join(tmp.dir, 'state.db'));
    hook = await startWebhookReceiver();
    otlp = await startOtlpReceiver({ protocol: 'http' });
  });

  afterEach(async () => {
    clearInterval(feeder);
    for (const d of deliveries.splice(0)) await d.stop();
    for (const s of sinks.splice(0)) await s.close();
    await hook.close();
    await otlp.close();
    journal.close();
    tmp.remove();
  });

  it('keeps the file and OTLP sinks flowing while the webhook receiver is down, then drains the webhook backlog without loss', { timeout: 60_000 }, async () => {
    const outFile = join(tmp.dir, 'out', `${MODEL}.ndjson`);
    const fileConfig = sinkSchema.parse({ name: 'file', type: 'file', path: join(tmp.dir, 'out', '{model_id}.ndjson') }) as FileSinkConfig;
    const hookConfig = sinkSchema.parse({ name: 'hook', type: 'webhook', url: hook.url, timeout: '500ms' }) as WebhookSinkConfig;
    const otlpConfig = sinkSchema.parse({ name: 'otlp', type: 'otlp', endpoint: otlp.endpoint, timeout: '2s' }) as OtlpSinkConfig;
    for (const name of ['file', 'hook', 'otlp']) journal.sink(name);
    const built: Array<[string, Sink]> = [
      ['file', await createFileSink(fileConfig, contextFor(journal, 'file'))],
      ['hook', createWebhookSink(hookConfig, contextFor(journal, 'hook'))],
      ['otlp', await createOtlpSink(otlpConfig, contextFor(journal, 'otlp'))],
    ];
    for (const [name, sink] of built) {
      sinks.push(sink);
      deliveries.push(startDelivery(journal, name, sink, testSettings({ maxEntries: 50, maxDelayMs: 20, retryBaseMs: 50, retryMaxMs: 1000 })));
    }

    const logs: string[] = [];
    const feed = () => {
      logs.push(...journal.append(MODEL, 5));
      for (const d of deliveries) d.notify();
    };
    feeder = setInterval(feed, 50);
    const cursor = (name: string) => journal.sink(name).cursor;
    const fileLogs = () => (existsSync(outFile) ? readFileSync(outFile, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { log: string }).log) : []);

    await waitUntil(() => cursor('file') >= 50 && cursor('hook') >= 50 && cursor('otlp') >= 50, 'every sink delivers before the outage');

    await hook.stop();
    const outageStart = { seq: journal.store.lastSeq(), hook: cursor('hook'), file: cursor('file'), otlp: cursor('otlp') };
    await new Promise((r) => setTimeout(r, 1000));
    const hookStuckAt = cursor('hook');
    const backlogEarly = journal.store.lastSeq() - hookStuckAt;
    await new Promise((r) => setTimeout(r, OUTAGE_MS - 1000));
    const outageEnd = { seq: journal.store.lastSeq(), hook: cursor('hook'), file: cursor('file'), otlp: cursor('otlp') };
    const fileDuringOutage = fileLogs();

    // The file and OTLP sinks kept up with the entries appended during the outage.
    expect(outageEnd.seq - outageStart.seq).toBeGreaterThan(500);
    expect(outageEnd.file).toBeGreaterThan(outageEnd.seq - 200);
    expect(outageEnd.otlp).toBeGreaterThan(outageEnd.seq - 200);
    expect(fileDuringOutage).toEqual(expect.arrayContaining(logs.slice(outageStart.seq, outageStart.seq + 300)));
    // The webhook sink's cursor stood still (past at most the batch in flight when it went down) and its backlog grew.
    expect(hookStuckAt).toBeLessThanOrEqual(outageStart.hook + 50);
    expect(outageEnd.hook).toBe(hookStuckAt);
    expect(outageEnd.seq - outageEnd.hook).toBeGreaterThan(backlogEarly + 400);

    await hook.restart();
    await new Promise((r) => setTimeout(r, 500));
    clearInterval(feeder);
    const last = journal.store.lastSeq();
    await waitUntil(() => cursor('hook') === last && cursor('file') === last && cursor('otlp') === last, 'every sink drains its backlog', 20_000);

    expect(logs).toHaveLength(last);
    expect(hook.uniqueEntries().map((e) => e.log)).toEqual(logs);
    expect(fileLogs()).toEqual(logs);
    const otlpLogs = new Set(otlp.logRecords().map((r) => r.body));
    expect(logs.filter((l) => !otlpLogs.has(l))).toEqual([]);
    for (const name of ['file', 'hook', 'otlp']) expect(journal.store.listDeadLetters(name)).toEqual([]);
  });
});
