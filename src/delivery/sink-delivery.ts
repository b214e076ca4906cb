//! The delivery loop of one sink: reads the journal from the sink's cursor, batches by
//! count, bytes and delay, sends, and moves the cursor only after the sink acknowledged.
//! Retryable failures are retried forever with backoff; a rejected batch goes to the
//! dead-letter table. One sink's trouble never holds back another: each has its own loop.
//! A sink that breaks its contract (throws, returns a malformed outcome, does not finish a
//! send within its timeout) gets a retry; a loop that fails unexpectedly starts again from
//! the committed cursor after a backoff: nothing a sink does ends its loop for good.
//! Making a batch is slot.ts's part; sending it and committing its outcome, sender.ts's.
import type { Logger } from 'pino';
import type { Sink } from '../sinks/contract.js';
import type { StateStore } from '../journal/store.js';
import { sliceBytes, sliceCount, type PageSlice } from '../journal/pages.js';
import type { StageOptions } from './processing/stage.js';
import { openStage } from './processing/open.js';
import { plainSlot, processedSlot, type Slot, type SlotRun } from './slot.js';
import type { Metrics } from '../telemetry/metrics.js';
import { StateWriteRetry } from '../journal/state-errors.js';
import { BatchSender } from './sender.js';
import { SinkHealth, superviseLoop } from './supervise.js';
import { FailureLog } from './failure-log.js';
import type { TapHub } from './tap.js';

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
  /** How long a partial batch sent early waits after the batch before it (default {@link FLUSH_GATHER_MS}). */
  flushGatherMs?: number;
}

/**
 * A partial batch sent early (see {@link SinkDelivery.flushSoon}) goes at once, unless a batch
 * went within this long: then it waits out the rest of it. With many models polled every
 * second, their polls end a few milliseconds apart; one batch for what they brought in
 * this time costs far less than a batch (and a commit of the cursor) for each. So a sink
 * gets at most two early batches a second, and a model whose poll ends alone is not held
 * (docs/decisions/0048 weighs the CPU saved against the lag added).
 */
export const FLUSH_GATHER_MS = 500;

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
  /** Counts each batch and shows it to `mls tap` (tap.ts). */
  tap?: Pick<TapHub, 'offer'>;
}

/** The delivery loop of one sink. */
export class SinkDelivery {
  private readonly stopController = new AbortController();
  private wakeUp: (() => void) | undefined;
  private pending = false;
  private draining = false;
  /** Entries up to this seq go out without waiting for max_delay (see flushSoon). */
  private flushThrough = 0;
  /** When (clock ms) the last batch went out. */
  private sentAtMs = Number.NEGATIVE_INFINITY;
  private runPromise: Promise<void> | undefined;
  /** Failed state writes; an acknowledgement written ends the outage. */
  private readonly stateRetry: StateWriteRetry;
  private readonly health: SinkHealth;
  /** Sends the batches and settles them (sender.ts). */
  private readonly sender: BatchSender;
  /** The batches of the running loop in flight, or settled and waiting for those before them. */
  private active: readonly Slot[] = [];

  constructor(private readonly d: SinkDeliveryDeps) {
    this.stateRetry = new StateWriteRetry(d.logger, { sink: d.name }, {
      paused: 'could not write the state file (disk full?); delivery to this sink pauses and resumes from its cursor',
      resumed: 'state file writable again; delivery resumed',
    });
    // Rate-limited lines about failures (a sink failing on every batch is not said on every attempt).
    const failures = new FailureLog({ sink: d.name, logger: d.logger, now: d.now });
    this.health = new SinkHealth({ sink: d.name, metrics: d.metrics, log: failures, now: d.now });
    this.sender = new BatchSender(d, this.health, failures, this.stateRetry);
  }

  /** Consecutive failed sends of the current batch. */
  get attempts(): number {
    return this.sender.attempts;
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

  /** Entries in the batches sent and not yet acknowledged. */
  get inFlightEntries(): number {
    return this.active.reduce((n, slot) => n + slot.count, 0);
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
   * the next batch: full batches may still be ahead of the partial one at the end. When a
   * batch went less than {@link FLUSH_GATHER_MS} ago, the partial one waits out the rest of
   * that time (never past max_delay), gathering what other polls bring meanwhile.
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
    const stage =
      this.d.processing &&
      openStage({
        ...this.d.processing,
        sink: name,
        logger: this.d.logger,
        models: settings.models,
        held: initial.held,
        readRange: (a, b) => store.slicesOfRange(a, b),
        dropped: (lines) => this.d.metrics.dropped.inc({ sink: name }, lines),
      });
    const run: SlotRun = { name, sink: this.d.sink, store, metrics: this.d.metrics, installationId, signal, sender: this.sender };
    // Batches that were in flight at the last stop are rebuilt first, with the same ranges.
    const recovered = [...initial.inflightRanges];
    let readFrom = recovered.length > 0 ? recovered[recovered.length - 1]!.lastSeq : initial.cursor;
    const active: Slot[] = [];
    this.active = active;
    let lastReplayCheck = 0;
    const concurrency = Math.max(1, settings.concurrency ?? 1);
    while (!signal.aborted) {
      if (active.length === 0 && this.d.now() - lastReplayCheck > 2_000) {
        lastReplayCheck = this.d.now();
        const dead = store.nextReplay(name);
        if (dead) {
          await this.sender.replay(dead, installationId, signal);
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
            const now = this.d.now();
            const waited = now - head.page.fetchedMs;
            if (!full && waited < settings.maxDelayMs && !this.draining) {
              if (firstSeq > this.flushThrough) {
                waitMs = settings.maxDelayMs - waited;
                break;
              }
              // Sent early (flushSoon), unless a batch went just before: then gathered a little.
              const gatherMs = settings.flushGatherMs ?? FLUSH_GATHER_MS;
              const sinceSent = now - this.sentAtMs;
              if (sinceSent < gatherMs) {
                waitMs = Math.min(gatherMs - sinceSent, settings.maxDelayMs - waited);
                break;
              }
            }
          }
        }
        const selected = settings.models ? slices.filter((x) => settings.models!.has(x.page.modelId)) : slices;
        const slot = stage ? processedSlot(run, stage, selected, firstSeq, lastSeq, again, this.draining) : plainSlot(run, selected, firstSeq, lastSeq, again);
        if (slot === undefined) {
          // Only checked for closes, and none closed: nothing to do until more comes.
          waitMs = Math.max(settings.maxDelayMs, 1000);
          break;
        }
        readFrom = Math.max(readFrom, lastSeq);
        if (!again) this.sentAtMs = this.d.now();
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
        this.sender.settle(slot, result);
      }
    }
    await Promise.all(active.map((x) => x.promise));
  }
}
