//! The destinations of the sink conformance suites: for each sink type, how to build the
//! sink, what has arrived (log texts, and whole records as the sink writes them), and the
//! ways the destination can fail.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { sinkSchema } from '../../../src/cli/config.js';
import type { FileSinkConfig } from '../../../src/sinks/file/config.js';
import type { ModuleSinkConfig } from '../../../src/sinks/module/config.js';
import type { OtlpSinkConfig } from '../../../src/sinks/otlp/config.js';
import type { StdoutSinkConfig } from '../../../src/sinks/stdout/config.js';
import type { WebhookSinkConfig } from '../../../src/sinks/webhook/config.js';
import type { Sink, SinkContext, SinkEntry } from '../../../src/sinks/contract.js';
import { createFileSink } from '../../../src/sinks/file/index.js';
import { createOtlpSink } from '../../../src/sinks/otlp/index.js';
import { sinkRegistry } from '../../../src/sinks/registry.js';
import { createStdoutSink } from '../../../src/sinks/stdout/index.js';
import { createWebhookSink } from '../../../src/sinks/webhook/index.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';
import { startWebhookReceiver } from '../../helpers/receivers.js';
import { OTLP_STREAM_SEVERITY, moduleRecordLine, ndjsonRecordLine, otlpRecordLine, receivedOtlpLine } from './records.js';

/** A way the destination fails that the sink must ride out by retrying. */
export interface FailureMode {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
  /** False when the failure ends by itself (a counted number of failed requests). */
  untilStopped?: boolean;
}

/** One destination of one sink type, shared by every sink built on it. */
export interface Destination {
  build(ctx: SinkContext): Promise<Sink>;
  /** Log texts that have arrived, in order, repeats included. */
  delivered(): string[];
  /** Log texts that arrived, counting each delivery identity (e.g. Idempotency-Key) once. */
  deliveredOnce(): string[];
  /** Whole records that have arrived, each as one line (see `SinkCase.recordLine`), repeats included. */
  records(): string[];
  /** Whole records that arrived, counting each delivery identity once. */
  recordsOnce(): string[];
  failures: Record<string, FailureMode>;
  /** Makes the destination refuse the next batch for good (an HTTP 400, say). */
  rejectNext?(): void;
  close(): Promise<void>;
}

export interface SinkCase {
  type: string;
  /** What a record must look like at the destination, in the form of `Destination.records`. */
  recordLine(e: SinkEntry): string;
  /** What reaches the destination across a stop and reopen. */
  guarantee: 'exactly once' | 'at least once';
  /** Names of the destination's failure modes (keys of `failures`), known before it opens. */
  failureModes: string[];
  /** Whether the destination can refuse a batch for good. */
  rejects: boolean;
  open(dir: string): Promise<Destination>;
}

export const MODEL = 'm1';

function parse<T>(block: Record<string, unknown>): T {
  return sinkSchema.parse(block) as T;
}

function linesOf(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

/** The lines of every file under `dir`, files in name order. */
function readTreeLines(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...readTreeLines(p));
    else out.push(...linesOf(readFileSync(p, 'utf8')));
  }
  return out;
}

function logOf(line: string): string {
  return (JSON.parse(line) as { log: string }).log;
}

const fileCase: SinkCase = {
  type: 'file',
  guarantee: 'exactly once',
  failureModes: ['a blocked output directory'],
  rejects: false,
  recordLine: ndjsonRecordLine,
  async open(dir) {
    const out = join(dir, 'out');
    const config = parse<FileSinkConfig>({ name: 'file', type: 'file', path: join(out, '{model_id}', 'log.ndjson') });
    const lines = () => readTreeLines(out);
    const logs = () => lines().map(logOf);
    return {
      build: (ctx) => createFileSink(config, ctx),
      delivered: logs,
      deliveredOnce: logs,
      records: lines,
      recordsOnce: lines,
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
  recordLine: ndjsonRecordLine,
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
      delivered: () => linesOf(text).map(logOf),
      deliveredOnce: () => [...new Set(linesOf(text).map(logOf))],
      records: () => linesOf(text),
      recordsOnce: () => [...new Set(linesOf(text))],
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
  recordLine: ndjsonRecordLine,
  async open() {
    const receiver = await startWebhookReceiver();
    const config = parse<WebhookSinkConfig>({ name: 'webhook', type: 'webhook', url: receiver.url, timeout: '150ms', compression: 'gzip' });
    return {
      build: async (ctx) => createWebhookSink(config, ctx),
      delivered: () => receiver.entries().map((e) => e.log),
      deliveredOnce: () => receiver.uniqueEntries().map((e) => e.log),
      // The receiver parses each line; written back, a line of the sink's NDJSON is the same text.
      records: () => receiver.entries().map((e) => JSON.stringify(e)),
      recordsOnce: () => receiver.uniqueEntries().map((e) => JSON.stringify(e)),
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
  recordLine: otlpRecordLine,
  async open() {
    const receiver = await startOtlpReceiver({ protocol: 'http' });
    const config = parse<OtlpSinkConfig>({
      name: 'otlp',
      type: 'otlp',
      endpoint: receiver.endpoint,
      protocol: 'http/protobuf',
      timeout: '2s',
      severity: OTLP_STREAM_SEVERITY,
    });
    const logs = () => receiver.logRecords().map((r) => r.body);
    const records = () => receiver.logRecords().map(receivedOtlpLine);
    return {
      build: (ctx) => createOtlpSink(config, ctx),
      delivered: logs,
      deliveredOnce: () => [...new Set(logs())],
      records,
      recordsOnce: () => [...new Set(records())],
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

const EXAMPLE_MODULE = fileURLToPath(new URL('../../../config/examples/custom-sink.example.js', import.meta.url));

const moduleCase: SinkCase = {
  type: 'module',
  guarantee: 'at least once',
  failureModes: [],
  rejects: false,
  recordLine: moduleRecordLine,
  async open(dir) {
    const file = join(dir, 'module.ndjson');
    const config = parse<ModuleSinkConfig>({ name: 'module', type: 'module', path: EXAMPLE_MODULE, options: { path: file } });
    const lines = () => (existsSync(file) ? linesOf(readFileSync(file, 'utf8')) : []);
    const logs = () => lines().map(logOf);
    return {
      build: (ctx) => sinkRegistry.build(config, ctx),
      delivered: logs,
      deliveredOnce: () => [...new Set(logs())],
      records: lines,
      recordsOnce: () => [...new Set(lines())],
      failures: {},
      close: async () => undefined,
    };
  },
};

/** A case for every built-in sink type, in the registry's order (conformance.test.ts checks it against `BUILTIN_SINKS`). */
export const CASES: SinkCase[] = [fileCase, stdoutCase, webhookCase, otlpCase, moduleCase];
