//! The delivery loop of one sink: reads the journal from the sink's cursor, batches by
//! count, bytes and delay, sends, and moves the cursor only after the sink acknowledged.
//! Retryable failures are retried forever with backoff; a rejected batch goes to the
//! dead-letter table. One sink's trouble never holds back another: each has its own loop.
import type { Logger } from 'pino';
import type { Sink, SinkBatch, SinkEntry, SendOutcome } from '../sinks/contract.js';
import type { DeadLetter, StateStore } from '../journal/store.js';
import type { Metrics } from '../telemetry/metrics.js';
import { describeError } from '../errors.js';
import { backoffDelay, sleep } from '../poller/sleep.js';
import { batchId } from './batch-id.js';

/** Batching and retry settings of one sink (milliseconds, bytes). */
export interface DeliverySettings {
  maxEntries: number;
  maxBytes: number;
  maxDelayMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Only entries of these models go to the sink (all when undefined). */
  models: ReadonlySet<string> | undefined;
}

/** What a delivery loop needs. */
export interface SinkDeliveryDeps {
  name: string;
  sink: Sink;
  settings: DeliverySettings;
  store: StateStore;
  metrics: Metrics;
  logger: Logger;
  now(): number;
  /** Called after each acknowledgement (the daemon trims the journal). */
  onAck?(): void;
}

/** The delivery loop of one sink. */
export class SinkDelivery {
  private readonly stopController = new AbortController();
  private wakeUp: (() => void) | undefined;
  private pending = false;
  private runPromise: Promise<void> | undefined;
  private lastRetryLogMs = 0;
  /** Last send error, for status output. */
  lastError: { message: string; atMs: number } | undefined;
  /** Consecutive failed sends of the current batch. */
  attempts = 0;

  constructor(private readonly d: SinkDeliveryDeps) {}

  get name(): string {
    return this.d.name;
  }

  /** Starts the loop (once). */
  start(): Promise<void> {
    this.runPromise ??= this.loop().catch((err: unknown) => {
      this.d.logger.error({ err, sink: this.d.name }, 'sink delivery stopped by an unexpected error');
    });
    return this.runPromise;
  }

  /** Tells the loop new entries are in the journal. */
  notify(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  /** Stops after the batch in flight (an unacknowledged batch is re-sent at the next start). */
  stop(): Promise<void> {
    this.stopController.abort();
    this.wakeUp?.();
    return this.runPromise ?? Promise.resolve();
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  private wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        this.pending = false;
        done();
      };
    });
  }

  private async loop(): Promise<void> {
    const { store, name, settings } = this.d;
    let lastReplayCheck = 0;
    while (!this.stopping) {
      const row = store.getSink(name);
      if (!row) return;
      if (this.d.now() - lastReplayCheck > 2_000) {
        lastReplayCheck = this.d.now();
        const dead = store.nextReplay(name);
        if (dead) {
          await this.replay(dead);
          continue;
        }
      }
      let entries: SinkEntry[];
      let firstSeq: number;
      let lastSeq: number;
      if (row.inflight) {
        ({ firstSeq, lastSeq } = row.inflight);
        entries = store.readRange(firstSeq, lastSeq);
      } else {
        entries = store.readAfter(row.cursor, settings.maxEntries, settings.maxBytes);
        if (entries.length === 0) {
          await this.wait(Math.max(settings.maxDelayMs, 1000));
          continue;
        }
        const full = entries.length >= settings.maxEntries || approxBytes(entries) >= settings.maxBytes;
        const waited = this.d.now() - entries[0]!.fetchedAtMs;
        if (!full && waited < settings.maxDelayMs && !this.stopping) {
          await this.wait(settings.maxDelayMs - waited);
          if (!this.stopping) continue;
          break;
        }
        firstSeq = entries[0]!.seq;
        lastSeq = entries[entries.length - 1]!.seq;
      }
      const selected = settings.models ? entries.filter((e) => settings.models!.has(e.modelId)) : entries;
      if (selected.length === 0) {
        store.ack(name, lastSeq, 0);
        this.d.onAck?.();
        continue;
      }
      if (!row.inflight) store.setInflight(name, firstSeq, lastSeq);
      await this.deliver({ id: batchId(name, firstSeq, lastSeq), firstSeq, lastSeq, entries: selected });
    }
  }

  /** Sends a dead letter again (after `mls dlq replay`); it leaves the table once acknowledged. */
  private async replay(dead: DeadLetter): Promise<void> {
    const { sink, store, name, logger, metrics } = this.d;
    const batch: SinkBatch = { id: batchId(name, dead.firstSeq, dead.lastSeq), firstSeq: dead.firstSeq, lastSeq: dead.lastSeq, entries: dead.entries };
    let outcome: SendOutcome;
    try {
      outcome = await sink.send(batch, this.stopController.signal);
    } catch (err) {
      outcome = { status: 'retry', error: describeError(err) };
    }
    if (outcome.status === 'ok') {
      if (outcome.state !== undefined) store.setSinkState(name, outcome.state);
      store.deleteDeadLetters([dead.id]);
      metrics.delivered.inc({ sink: name }, dead.entries.length);
      logger.info({ sink: name, deadLetter: dead.id, entries: dead.entries.length }, 'dead letter replayed');
    } else {
      store.keepDeadLetter(dead.id, outcome.error);
      logger.warn({ sink: name, deadLetter: dead.id, error: outcome.error }, 'dead letter replay failed; it stays in the table');
    }
  }

  /** Sends one batch until it is acknowledged, rejected, or the loop stops. */
  private async deliver(batch: SinkBatch): Promise<void> {
    const { sink, store, name, metrics, logger, settings } = this.d;
    this.attempts = 0;
    while (!this.stopping) {
      const started = performance.now();
      let outcome: SendOutcome;
      try {
        outcome = await sink.send(batch, this.stopController.signal);
      } catch (err) {
        outcome = { status: 'retry', error: `sink threw: ${describeError(err)}` };
        logger.error({ sink: name, err }, 'sink threw instead of returning an outcome; retrying the batch');
      }
      metrics.sendDuration.observe({ sink: name }, (performance.now() - started) / 1000);
      metrics.batches.inc({ sink: name, outcome: outcome.status });
      if (outcome.status === 'ok') {
        store.ack(name, batch.lastSeq, batch.entries.length, outcome.state);
        metrics.delivered.inc({ sink: name }, batch.entries.length);
        metrics.deliveryLatency.observe({ sink: name }, Math.max(0, this.d.now() - batch.entries[0]!.fetchedAtMs) / 1000);
        if (this.attempts > 0) logger.info({ sink: name, attempts: this.attempts }, 'sink delivering again');
        this.attempts = 0;
        this.lastError = undefined;
        this.d.onAck?.();
        return;
      }
      metrics.sinkFailures.inc({ sink: name });
      this.lastError = { message: outcome.error, atMs: this.d.now() };
      if (outcome.status === 'reject') {
        store.deadLetter(name, batch.firstSeq, batch.lastSeq, batch.entries, outcome.error);
        metrics.deadLetters.inc({ sink: name }, batch.entries.length);
        logger.error({ sink: name, entries: batch.entries.length, firstSeq: batch.firstSeq, lastSeq: batch.lastSeq, error: outcome.error }, "sink rejected a batch; moved to the dead-letter table (see 'mls dlq list')");
        this.d.onAck?.();
        return;
      }
      this.attempts++;
      metrics.sinkRetries.inc({ sink: name });
      const delay = outcome.afterMs ?? backoffDelay(this.attempts, settings.retryBaseMs, settings.retryMaxMs);
      const now = this.d.now();
      if (now - this.lastRetryLogMs > 30_000) {
        this.lastRetryLogMs = now;
        logger.warn({ sink: name, attempts: this.attempts, retryInMs: delay, error: outcome.error }, 'sink send failed; retrying');
      }
      await sleep(delay, this.stopController.signal);
    }
  }
}

function approxBytes(entries: readonly SinkEntry[]): number {
  let n = 0;
  for (const e of entries) n += e.log.length + e.time.length + e.modelId.length + 48;
  return n;
}
