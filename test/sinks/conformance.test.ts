//! One conformance suite for every sink type, driven through the real delivery loop and
//! a real state file: acknowledgement only of what arrived, retries until success without
//! loss, dead-lettering of permanent rejections, no loss across close and reopen, and an
//! idempotent close. Each sink type plugs in a destination: how to build the sink, what
//! has arrived, and the ways it can fail.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sinkSchema } from '../../src/cli/config.js';
import type { FileSinkConfig } from '../../src/sinks/file/config.js';
import type { ModuleSinkConfig } from '../../src/sinks/module/config.js';
import type { OtlpSinkConfig } from '../../src/sinks/otlp/config.js';
import type { StdoutSinkConfig } from '../../src/sinks/stdout/config.js';
import type { WebhookSinkConfig } from '../../src/sinks/webhook/config.js';
import type { SinkDelivery } from '../../src/delivery/sink-delivery.js';
import type { SendOutcome, Sink, SinkBatch, SinkContext } from '../../src/sinks/contract.js';
import { createFileSink } from '../../src/sinks/file/index.js';
import { createOtlpSink } from '../../src/sinks/otlp/index.js';
import { buildSink } from '../../src/sinks/registry.js';
import { createStdoutSink } from '../../src/sinks/stdout/index.js';
import { createWebhookSink } from '../../src/sinks/webhook/index.js';
import { TestJournal, contextFor, startDelivery, tempDir, testSettings, waitUntil } from '../helpers/delivery.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { startWebhookReceiver } from '../helpers/receivers.js';

/** A way the destination fails that the sink must ride out by retrying. */
interface FailureMode {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
  /** False when the failure ends by itself (a counted number of failed requests). */
  untilStopped?: boolean;
}

/** One destination of one sink type, shared by every sink built on it. */
interface Destination {
  build(ctx: SinkContext): Promise<Sink>;
  /** Log texts that have arrived, in order, repeats included. */
  delivered(): string[];
  /** Log texts that arrived, counting each delivery identity (e.g. Idempotency-Key) once. */
  deliveredOnce(): string[];
  failures: Record<string, FailureMode>;
  /** Makes the destination refuse the next batch for good (an HTTP 400, say). */
  rejectNext?(): void;
  close(): Promise<void>;
}

interface SinkCase {
  type: string;
  /** What reaches the destination across a stop and reopen. */
  guarantee: 'exactly once' | 'at least once';
  /** Names of the destination's failure modes (keys of `failures`), known before it opens. */
  failureModes: string[];
  /** Whether the destination can refuse a batch for good. */
  rejects: boolean;
  open(dir: string): Promise<Destination>;
}

const MODEL = 'm1';

function parse<T>(block: Record<string, unknown>): T {
  return sinkSchema.parse(block) as T;
}

function logsOfLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { log: string }).log);
}

function readTreeLogs(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...readTreeLogs(p));
    else out.push(...logsOfLines(readFileSync(p, 'utf8')));
  }
  return out;
}

const fileCase: SinkCase = {
  type: 'file',
  guarantee: 'exactly once',
  failureModes: ['a blocked output directory'],
  rejects: false,
  async open(dir) {
    const out = join(dir, 'out');
    const config = parse<FileSinkConfig>({ name: 'file', type: 'file', path: join(out, '{model_id}', 'log.ndjson') });
    const logs = () => readTreeLogs(out);
    return {
      build: (ctx) => createFileSink(config, ctx),
      delivered: logs,
      deliveredOnce: logs,
      failures: {
        // A file where the output directory should be: every write fails until it is gone.
        // (A read-only directory does not stop root, which runs these tests in CI.)
        'a blocked output directory': {
          start: () => writeFileSync(out, 'in the way'),
          stop: () => rmSync(out),
        },
      },
      close: async () => undefined,
    };
  },
};

const stdoutCase: SinkCase = {
  type: 'stdout',
  guarantee: 'at least once',
  failureModes: [],
  rejects: false,
  async open() {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        text += chunk.toString('utf8');
        cb();
      },
    });
    const config = parse<StdoutSinkConfig>({ name: 'stdout', type: 'stdout' });
    return {
      build: async (ctx) => createStdoutSink(config, ctx, stream),
      delivered: () => logsOfLines(text),
      deliveredOnce: () => [...new Set(logsOfLines(text))],
      failures: {},
      close: async () => undefined,
    };
  },
};

const webhookCase: SinkCase = {
  type: 'webhook',
  guarantee: 'at least once',
  failureModes: ['HTTP 503', 'HTTP 500 with Retry-After', 'timeouts', 'a receiver that is down'],
  rejects: true,
  async open() {
    const receiver = await startWebhookReceiver();
    const config = parse<WebhookSinkConfig>({ name: 'webhook', type: 'webhook', url: receiver.url, timeout: '150ms', compression: 'gzip' });
    return {
      build: async (ctx) => createWebhookSink(config, ctx),
      delivered: () => receiver.entries().map((e) => e.log),
      deliveredOnce: () => receiver.uniqueEntries().map((e) => e.log),
      failures: {
        'HTTP 503': { start: () => receiver.failNext(503, Infinity), stop: () => receiver.recover() },
        'HTTP 500 with Retry-After': { start: () => receiver.failNext(500, Infinity, '0'), stop: () => receiver.recover() },
        timeouts: { start: () => receiver.setDelay(1000), stop: () => receiver.setDelay(0) },
        'a receiver that is down': { start: () => receiver.stop(), stop: () => receiver.restart() },
      },
      rejectNext: () => receiver.failNext(400, 1, undefined, 'bad batch'),
      close: () => receiver.close(),
    };
  },
};

const otlpCase: SinkCase = {
  type: 'otlp',
  guarantee: 'at least once',
  failureModes: ['HTTP 503', 'a receiver that is down'],
  rejects: true,
  async open() {
    const receiver = await startOtlpReceiver({ protocol: 'http' });
    const config = parse<OtlpSinkConfig>({ name: 'otlp', type: 'otlp', endpoint: receiver.endpoint, protocol: 'http/protobuf', timeout: '2s' });
    const logs = () => receiver.logRecords().map((r) => r.body);
    return {
      build: (ctx) => createOtlpSink(config, ctx),
      delivered: logs,
      deliveredOnce: () => [...new Set(logs())],
      failures: {
        // The receiver fails a counted number of requests; it has no "until told" switch.
        'HTTP 503': { start: () => receiver.failNext(503, 2), stop: () => undefined, untilStopped: false },
        'a receiver that is down': { start: () => receiver.setDown(true), stop: () => receiver.setDown(false) },
      },
      rejectNext: () => receiver.failNext(400, 1),
      close: () => receiver.close(),
    };
  },
};

const EXAMPLE_MODULE = fileURLToPath(new URL('../../config/examples/custom-sink.example.js', import.meta.url));

const moduleCase: SinkCase = {
  type: 'module',
  guarantee: 'at least once',
  failureModes: [],
  rejects: false,
  async open(dir) {
    const file = join(dir, 'module.ndjson');
    const config = parse<ModuleSinkConfig>({ name: 'module', type: 'module', path: EXAMPLE_MODULE, options: { path: file } });
    const logs = () => (existsSync(file) ? logsOfLines(readFileSync(file, 'utf8')) : []);
    return {
      build: (ctx) => buildSink(config, ctx),
      delivered: logs,
      deliveredOnce: () => [...new Set(logs())],
      failures: {},
      close: async () => undefined,
    };
  },
};

const CASES: SinkCase[] = [fileCase, stdoutCase, webhookCase, otlpCase, ...(existsSync(EXAMPLE_MODULE) ? [moduleCase] : [])];

/** Every log of `expected` that is missing from `actual`. */
function missing(expected: readonly string[], actual: readonly string[]): string[] {
  const have = new Set(actual);
  return expected.filter((l) => !have.has(l));
}

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

