//! The delivery loop of one sink: reads the journal from the sink's cursor, batches by
//! count, bytes and delay, sends, and moves the cursor only after the sink acknowledged.
//! Retryable failures are retried forever with backoff; a rejected batch goes to the
//! dead-letter table. One sink's trouble never holds back another: each has its own loop.
//! A sink that breaks its contract (throws, returns a malformed outcome, does not finish a
//! send within its timeout) gets a retry; a loop that fails unexpectedly starts again from
//! the committed cursor after a backoff: nothing a sink does ends its loop for good.
import type { Logger } from 'pino';
import type { Sink, SinkBatch } from '../sinks/contract.js';
import type { DeadLetter, HeldGroups, InflightBatch, StateStore } from '../journal/store.js';
import { sliceBytes, sliceCount, type PageSlice } from '../journal/pages.js';
import { journalBatch, recordBatch } from './batch.js';
import type { ProcessingStage, StageOptions } from './processing/stage.js';
import { openStage } from './processing/open.js';
import { parseCloses, skipSlot, type DeliverResult, type Slot } from './slot.js';
import type { Metrics } from '../telemetry/metrics.js';
import { backoffDelay, sleep } from '../time/backoff.js';
import { batchId, legacyBatchId } from './batch-id.js';
import { StateWriteRetry } from '../journal/state-errors.js';
import { guardedSend, type SendGuard } from './guarded-send.js';
import { SinkHealth, superviseLoop } from './supervise.js';
import { FailureLog } from './failure-log.js';

/** Batching and retry settings of one sink (milliseconds, bytes). */
export interface DeliverySettings {
  maxEntries: number;
  maxBytes: number;
  maxDelayMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Only entries of these models go to the sink (all when undefined). */
  models: ReadonlySet<string> | undefined;
  /**
   * Batches in flight at once (default 1). The cursor still moves in seq order: a batch
   * acknowledged early waits for the ones before it. Sinks whose state must be committed
   * between batches (the file sink) run with 1.
   */
  concurrency?: number;
  /**
   * Longest one `send` may take (module sinks' `timeout`): the sink's signal then fires and
   * the send counts as a retry. Undefined: no bound (built-in sinks bound their own requests).
   */
  sendTimeoutMs?: number;
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
  /** Processing of the sink's records (multiline, levels, JSON, filter, redaction); absent: entries as the journal holds them. */
  processing?: Omit<StageOptions, 'sink'>;
}

/** The delivery loop of one sink. */
export class SinkDelivery {
  private readonly stopController = new AbortController();
  private wakeUp: (() => void) | undefined;
  private pending = false;
  private draining = false;
  /** Entries up to this seq go out without waiting for max_delay (see flushSoon). */
  private flushThrough = 0;
  private runPromise: Promise<void> | undefined;
  /** Rate-limited lines about failures (a sink failing on every batch is not said on every attempt). */
  private readonly failures: FailureLog;
  /** Failed state writes; an acknowledgement written ends the outage. */
  private readonly stateRetry: StateWriteRetry;
  private readonly guard: SendGuard;
  private readonly health: SinkHealth;
  /** Consecutive failed sends of the current batch. */
  attempts = 0;

  constructor(private readonly d: SinkDeliveryDeps) {
    this.stateRetry = new StateWriteRetry(d.logger, { sink: d.name }, {
      paused: 'could not write the state file (disk full?); delivery to this sink pauses and resumes from its cursor',
      resumed: 'state file writable again; delivery resumed',
    });
    this.guard = { sink: d.name, timeoutMs: d.settings.sendTimeoutMs, maxAfterMs: d.settings.retryMaxMs };
    this.failures = new FailureLog({ sink: d.name, logger: d.logger, now: d.now });
    this.health = new SinkHealth({ sink: d.name, metrics: d.metrics, log: this.failures, now: d.now });
  }

  /** Last send error or fault, for status output (until a batch is delivered). */
  get lastError(): { message: string; atMs: number } | undefined {
    return this.health.lastError;
  }

  /** Since when (clock ms) the sink has been failing without an acknowledgement; undefined while it delivers. */
  get failingSinceMs(): number | undefined {
    return this.health.failingSinceMs;
  }

  get name(): string {
    return this.d.name;
  }

  /** Starts the loop (once). */
  start(): Promise<void> {
    this.runPromise ??= this.supervise().catch((err: unknown) => {
      this.d.logger.error({ err, sink: this.d.name }, 'sink delivery stopped by an unexpected error');
    });
    return this.runPromise;
  }

  /**
   * Runs the loop until stopped; whatever ends it (a failed state write, a bug of ours or of
   * the sink), it starts again from the committed cursor and in-flight ranges (supervise.ts).
   */
  private supervise(): Promise<void> {
    const { retryBaseMs, retryMaxMs } = this.d.settings;
    return superviseLoop(
      () => this.loop(),
      this.stopController.signal,
      (err) => this.stateRetry.failed(err),
      (err) => this.health.crashed(err, retryBaseMs, retryMaxMs),
    );
  }

  /**
   * Sends what is in the journal now without waiting for max_delay (a poll just finished:
   * no more pages are coming for a while). Holds for every entry committed so far, not just
   * the next batch: full batches may still be ahead of the partial one at the end.
   */
  flushSoon(): void {
    this.flushThrough = Math.max(this.flushThrough, this.d.store.lastSeq());
    this.notify();
  }

  /** From now on, send partial batches at once instead of waiting for max_delay (shutdown). */
  drain(): void {
    this.draining = true;
    this.notify();
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
    // Sends of this run stop with it: after a failure the next run re-sends what they held.
    const run = new AbortController();
    const stop = () => run.abort();
    this.stopController.signal.addEventListener('abort', stop, { once: true });
    try {
      await this.runLoop(run.signal);
    } finally {
      run.abort();
      this.stopController.signal.removeEventListener('abort', stop);
    }
  }

  private async runLoop(signal: AbortSignal): Promise<void> {
    const { store, name, settings } = this.d;
    const initial = store.getSink(name);
    if (!initial) return;
    const installationId = store.installationId!;
    const stage = this.d.processing && openStage({ ...this.d.processing, sink: name, logger: this.d.logger, models: settings.models, held: initial.held, readRange: (a, b) => store.slicesOfRange(a, b) });
    // Batches that were in flight at the last stop are rebuilt first, with the same ranges.
    const recovered = [...initial.inflightRanges];
    let readFrom = recovered.length > 0 ? recovered[recovered.length - 1]!.lastSeq : initial.cursor;
    const active: Slot[] = [];
    let lastReplayCheck = 0;
    const concurrency = Math.max(1, settings.concurrency ?? 1);
    while (!signal.aborted) {
      if (active.length === 0 && this.d.now() - lastReplayCheck > 2_000) {
        lastReplayCheck = this.d.now();
        const dead = store.nextReplay(name);
        if (dead) {
          await this.replay(dead, installationId, signal);
          continue;
        }
      }
      let waitMs: number | undefined;
      while (active.length < concurrency && !signal.aborted) {
        let slices: PageSlice[];
        let firstSeq: number;
        let lastSeq: number;
        const again = recovered.shift();
        if (again) {
          ({ firstSeq, lastSeq } = again);
          slices = store.slicesOfRange(firstSeq, lastSeq);
        } else {
          slices = store.slicesAfter(readFrom, settings.maxEntries, settings.maxBytes);
          if (slices.length === 0) {
            // Nothing new; groups the models' checkpoints have passed since still close (a
            // batch of no new lines, sent alone: it ends at the cursor).
            if (stage?.holding && active.length === 0) {
              firstSeq = readFrom + 1;
              lastSeq = readFrom;
            } else {
              waitMs = Math.max(settings.maxDelayMs, 1000);
              break;
            }
          } else {
            const head = slices[0]!;
            const tail = slices[slices.length - 1]!;
            firstSeq = head.page.firstSeq + head.from;
            lastSeq = tail.page.firstSeq + tail.to - 1;
            const full = sliceCount(slices) >= settings.maxEntries || sliceBytes(slices) >= settings.maxBytes;
            const waited = this.d.now() - head.page.fetchedMs;
            if (!full && waited < settings.maxDelayMs && !this.draining && firstSeq > this.flushThrough) {
              waitMs = settings.maxDelayMs - waited;
              break;
            }
          }
        }
        const selected = settings.models ? slices.filter((x) => settings.models!.has(x.page.modelId)) : slices;
        const slot = stage ? this.processedSlot(stage, selected, firstSeq, lastSeq, again, installationId, signal) : this.plainSlot(selected, firstSeq, lastSeq, again, installationId, signal);
        if (slot === undefined) {
          // Only checked for closes, and none closed: nothing to do until more comes.
          waitMs = Math.max(settings.maxDelayMs, 1000);
          break;
        }
        readFrom = Math.max(readFrom, lastSeq);
        active.push(slot);
        // A batch of closes only covers no seq: the next batch would start where it does, and
        // its in-flight row would replace this one's (keyed by first seq). It settles alone.
        if (lastSeq < firstSeq) break;
      }
      if (active.length === 0) {
        await this.wait(waitMs ?? 1000);
        continue;
      }
      if (!active[0]!.done) await Promise.race(active.filter((x) => !x.done).map((x) => x.promise));
      // The cursor moves only over the contiguous run of settled batches, in seq order.
      while (active.length > 0 && active[0]!.done) {
        const slot = active.shift()!;
        const result = slot.result!;
        if (result.kind === 'stopped') {
          await Promise.all(active.map((x) => x.promise));
          return;
        }
        this.settle(slot, result);
      }
    }
    await Promise.all(active.map((x) => x.promise));
  }

  private settle(slot: Slot, result: DeliverResult): void {
    const { store, name, metrics } = this.d;
    if (result.kind === 'skip') {
      store.ack(name, slot.lastSeq, 0, undefined, slot.held);
    } else if (result.kind === 'ok') {
      store.ack(name, slot.lastSeq, slot.count, result.state, slot.held);
      metrics.delivered.inc({ sink: name }, slot.count);
      metrics.deliveryLatency.observe({ sink: name }, Math.max(0, this.d.now() - slot.fetchedMs) / 1000);
    } else if (result.kind === 'reject') {
      store.deadLetter(name, slot.firstSeq, slot.lastSeq, slot.batch!.entries, result.error, slot.held);
      metrics.deadLetters.inc({ sink: name }, slot.count);
      this.failures.deadLettered({ entries: slot.count, firstSeq: slot.firstSeq, lastSeq: slot.lastSeq, error: result.error });
    }
    if (slot.held !== undefined) metrics.heldLines.set({ sink: name }, slot.heldLines);
    this.stateRetry.succeeded();
    this.d.onAck?.();
    this.health.settled();
  }

  /** A batch of the journal's entries as they are. */
  private plainSlot(selected: PageSlice[], firstSeq: number, lastSeq: number, again: InflightBatch | undefined, installationId: string, signal: AbortSignal): Slot {
    const { store, name } = this.d;
    const count = sliceCount(selected);
    if (count === 0) return skipSlot(firstSeq, lastSeq, undefined, 0);
    // A batch rebuilt after a restart keeps the key it was first sent under (one recorded
    // by schema 4 or earlier has none stored: it gets the key that version derived).
    const key = again ? (again.key ?? legacyBatchId(name, firstSeq, lastSeq)) : batchId(installationId, name, firstSeq, lastSeq);
    if (!again && this.d.sink.stableBatchIds !== false) store.setInflight(name, firstSeq, lastSeq, key);
    return this.sendSlot(journalBatch(key, firstSeq, lastSeq, selected), count, selected[0]!.page.fetchedMs, undefined, 0, signal);
  }

  /**
   * A batch of processed records: what the lines of [firstSeq, lastSeq] and the groups the
   * models' checkpoints closed gave. Undefined for a check of closes only that closed nothing.
   */
  private processedSlot(
    stage: ProcessingStage,
    selected: PageSlice[],
    firstSeq: number,
    lastSeq: number,
    again: InflightBatch | undefined,
    installationId: string,
    signal: AbortSignal,
  ): Slot | undefined {
    const { store, name, metrics } = this.d;
    // At a shutdown the open groups close: their lines are not left waiting for the next start.
    const out = stage.build(selected, lastSeq, again ? parseCloses(again.closes) : undefined, this.draining);
    if (lastSeq < firstSeq && out.closes.length === 0) return undefined;
    for (const [model, n] of out.dropped) metrics.processingDropped.inc({ sink: name, model }, n);
    const held = stage.held();
    const heldLines = stage.heldLines();
    if (out.records.length === 0) return skipSlot(firstSeq, lastSeq, held, heldLines);
    const closes = out.closes.length > 0 ? JSON.stringify(out.closes) : undefined;
    const key = again ? (again.key ?? legacyBatchId(name, firstSeq, lastSeq)) : batchId(installationId, name, firstSeq, lastSeq, closes);
    if (!again && this.d.sink.stableBatchIds !== false) store.setInflight(name, firstSeq, lastSeq, key, closes);
    const fetchedMs = selected[0]?.page.fetchedMs ?? out.records.fetchedAtMs(0);
    return this.sendSlot(recordBatch(key, firstSeq, lastSeq, out.records), out.lines, fetchedMs, held, heldLines, signal);
  }

  private sendSlot(batch: SinkBatch, count: number, fetchedMs: number, held: HeldGroups | undefined, heldLines: number, signal: AbortSignal): Slot {
    const slot: Slot = { firstSeq: batch.firstSeq, lastSeq: batch.lastSeq, batch, count, fetchedMs, held, heldLines, done: false, result: undefined, promise: Promise.resolve() };
    slot.promise = this.deliver(batch, signal).then((result) => {
      slot.result = result;
      slot.done = true;
    });
    return slot;
  }

  /** Sends a dead letter again (after `mls dlq replay`); it leaves the table once acknowledged. */
  private async replay(dead: DeadLetter, installationId: string, signal: AbortSignal): Promise<void> {
    const { sink, store, name, logger, metrics } = this.d;
    const batch: SinkBatch = { id: batchId(installationId, name, dead.firstSeq, dead.lastSeq), firstSeq: dead.firstSeq, lastSeq: dead.lastSeq, entries: dead.entries };
    const { outcome, fault } = await guardedSend(sink, batch, signal, this.guard);
    if (fault !== undefined) this.health.fault(fault);
    if (outcome.status === 'ok') {
      if (outcome.state !== undefined) store.setSinkState(name, outcome.state);
      store.deleteDeadLetters([dead.id]);
      metrics.delivered.inc({ sink: name }, dead.entries.length);
      logger.info({ sink: name, deadLetter: dead.id, entries: dead.entries.length }, 'dead letter replayed');
    } else {
      store.keepDeadLetter(dead.id, outcome.error);
      this.failures.replayFailed({ deadLetter: dead.id, error: outcome.error });
    }
  }

  /** Sends one batch until it is acknowledged or rejected, or the loop (run) stops. */
  private async deliver(batch: SinkBatch, signal: AbortSignal): Promise<DeliverResult> {
    const { sink, name, metrics, logger, settings } = this.d;
    let attempts = 0;
    while (!signal.aborted) {
      const started = performance.now();
      const { outcome, fault } = await guardedSend(sink, batch, signal, this.guard);
      metrics.sendDuration.observe({ sink: name }, (performance.now() - started) / 1000);
      metrics.batches.inc({ sink: name, outcome: outcome.status });
      if (outcome.status === 'ok') {
        if (attempts > 0) logger.info({ sink: name, attempts }, 'sink delivering again');
        this.attempts = 0;
        this.health.delivered();
        return { kind: 'ok', state: outcome.state };
      }
      metrics.sinkFailures.inc({ sink: name });
      if (fault !== undefined) this.health.fault(fault);
      else this.health.failed(outcome.error);
      if (outcome.status === 'reject') {
        this.health.movedOn();
        return { kind: 'reject', error: outcome.error };
      }
      attempts++;
      this.attempts = attempts;
      metrics.sinkRetries.inc({ sink: name });
      const delay = outcome.afterMs ?? backoffDelay(attempts, settings.retryBaseMs, settings.retryMaxMs);
      // A fault was said already (and counted): its retry needs no line of its own.
      if (fault === undefined) this.failures.retrying({ attempts, retryInMs: delay, error: outcome.error });
      await sleep(delay, signal);
    }
    return { kind: 'stopped' };
  }
}


