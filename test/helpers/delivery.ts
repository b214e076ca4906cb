//! Drives sinks through the real delivery loop in tests: a StateStore on a temporary
//! SQLite file, journal appends the way the poller commits pages, and SinkDelivery
//! loops with fast retry settings.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { contentHash } from '../../src/dedupe/key.js';
import { SinkDelivery, type DeliverySettings } from '../../src/delivery/sink-delivery.js';
import { StateStore, type PreparedEntry } from '../../src/journal/store.js';
import type { Sink, SinkContext } from '../../src/sinks/contract.js';
import { Metrics } from '../../src/telemetry/metrics.js';

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix = 'mls-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The log text of the `i`-th test entry of `model`: unique, so deliveries can be counted. */
export function logText(model: string, i: number): string {
  return `${model} line ${i}`;
}

/** A store on a temporary SQLite file, with helpers to append entries and read a sink's row. */
export class TestJournal {
  readonly store: StateStore;
  private readonly counters = new Map<string, number>();
  private readonly nextNs = new Map<string, bigint>();
  private readonly baseMs = Date.parse('2026-11-22T10:00:00Z');

  constructor(readonly path: string) {
    this.store = StateStore.open(path);
  }

  /**
   * Appends `n` new entries of `model` in one committed page, as the poller does, and
   * returns their log texts. Times advance by 1 µs per entry (up to a million entries per model).
   */
  append(model: string, n: number): string[] {
    const first = this.counters.get(model) ?? 0;
    this.counters.set(model, first + n);
    const { store } = this;
    store.ensureCheckpoint(model, this.baseMs);
    const cp = store.beginWindow(model, this.baseMs, this.baseMs + 3_600_000);
    const prepared: PreparedEntry[] = [];
    const logs: string[] = [];
    for (let i = first; i < first + n; i++) {
      const ns = BigInt(this.baseMs) * 1_000_000n + BigInt(i) * 1000n;
      const time = `2026-11-22T10:00:00.${String(i * 1000).padStart(9, '0')}Z`;
      const log = logText(model, i);
      logs.push(log);
      const stream = i % 2 === 0 ? 'stdout' : 'stderr';
      prepared.push({ entry: { time, log, stream }, timeNs: ns, hash: contentHash(stream, log) });
    }
    store.commitPage(model, cp.fetchId, this.baseMs, prepared, { end: true }, Date.now());
    return logs;
  }

  /**
   * Appends the given lines of `model` (one entry each, on `stream`) in one committed page.
   * Each model's times advance by `stepUs` (default 1,000 µs) per line from where its last
   * page ended; `atMs` (ms after the journal's base time) sets where this page starts.
   */
  appendLines(model: string, lines: readonly string[], options: { stream?: string; streams?: readonly string[]; stepUs?: number; atMs?: number } = {}): void {
    const step = BigInt(options.stepUs ?? 1000) * 1000n;
    const base = BigInt(this.baseMs) * 1_000_000n;
    let ns = options.atMs !== undefined ? base + BigInt(options.atMs) * 1_000_000n : (this.nextNs.get(model) ?? base);
    const { store } = this;
    store.ensureCheckpoint(model, this.baseMs);
    const cp = store.beginWindow(model, this.baseMs, this.baseMs + 3_600_000);
    const defaultStream = options.stream ?? 'stderr';
    const prepared: PreparedEntry[] = lines.map((log, i) => {
      const stream = options.streams?.[i] ?? defaultStream;
      const timeNs = ns;
      ns += step;
      const time = new Date(Number(timeNs / 1_000_000n)).toISOString().replace('Z', `${String(timeNs % 1_000_000n).padStart(6, '0')}Z`);
      return { entry: { time, log, stream }, timeNs, hash: contentHash(stream, log) };
    });
    this.nextNs.set(model, ns);
    store.commitPage(model, cp.fetchId, this.baseMs, prepared, { end: true }, Date.now());
  }

  /** The sink's cursor row (created on first use, at the journal's current end). */
  sink(name: string) {
    return this.store.ensureSink(name);
  }

  close(): void {
    this.store.close();
  }
}

/** A sink context backed by the store, like the daemon builds it. */
export function contextFor(journal: TestJournal, name: string, logger: SinkContext['logger'] = silentLogger()): SinkContext {
  const row = journal.store.ensureSink(name);
  return {
    name,
    state: row.state,
    now: () => Date.now(),
    logger,
    commitState: (state: string) => journal.store.setSinkState(name, state),
  };
}

/** A logger that drops everything. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Fast settings for tests: small batches, no batching delay to speak of, quick retries. */
export function testSettings(over: Partial<DeliverySettings> = {}): DeliverySettings {
  return { maxEntries: 10, maxBytes: 1 << 20, maxDelayMs: 5, retryBaseMs: 20, retryMaxMs: 200, models: undefined, ...over };
}

/** Starts a delivery loop for `sink` on the journal (creating the sink's row if needed). */
export function startDelivery(journal: TestJournal, name: string, sink: Sink, settings: DeliverySettings = testSettings(), onAck?: () => void): SinkDelivery {
  journal.store.ensureSink(name);
  const delivery = new SinkDelivery({
    name,
    sink,
    store: journal.store,
    metrics: new Metrics({ processMetrics: false }),
    logger: silentLogger(),
    now: () => Date.now(),
    settings,
    ...(onAck ? { onAck } : {}),
  });
  void delivery.start();
  delivery.notify();
  return delivery;
}

/** Polls `check` every 10 ms until it returns true; fails after `timeoutMs` with `what`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
