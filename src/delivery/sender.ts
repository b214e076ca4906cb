//! Sending one sink's batches, and committing what came of them. A batch is sent until the
//! sink acknowledges or rejects it: a retry waits its backoff (or the sink's `afterMs`) and
//! goes again, for as long as the loop runs. A settled batch's outcome is committed with the
//! cursor and the open groups held after it; a rejected batch goes to the dead-letter table,
//! and a dead letter marked for replay is sent once more. Every send is guarded
//! (guarded-send.ts): whatever a sink does wrong is a fault and a retry.
import type { Logger } from 'pino';
import type { Sink, SinkBatch, SinkEntry } from '../sinks/contract.js';
import type { DeadLetter, StateStore } from '../journal/store.js';
import type { StateWriteRetry } from '../journal/state-errors.js';
import type { Metrics } from '../telemetry/metrics.js';
import { backoffDelay, sleep } from '../time/backoff.js';
import { batchId } from './batch-id.js';
import { guardedSend, type SendGuard } from './guarded-send.js';
import type { DeliverResult, Slot } from './slot.js';
import type { SinkHealth } from './supervise.js';
import type { FailureLog } from './failure-log.js';
import type { TapHub } from './tap.js';

/** What sending needs of a sink's delivery loop (the loop's own deps serve as they are). */
export interface SenderDeps {
  name: string;
  sink: Sink;
  store: StateStore;
  metrics: Metrics;
  logger: Logger;
  settings: { retryBaseMs: number; retryMaxMs: number; sendTimeoutMs?: number };
  now(): number;
  /** Called after each acknowledgement (the daemon trims the journal). */
  onAck?(): void;
  /** Counts each batch and shows it to `mls tap`, as the sink's send is handed it (tap.ts). */
  tap?: Pick<TapHub, 'offer'>;
}

/** The sends of one sink's delivery loop, and the settling of their batches. */
export class BatchSender {
  private readonly guard: SendGuard;
  /** Consecutive failed sends of the current batch. */
  attempts = 0;

  /**
   * `health` and `failures` are the loop's account of the sink and its rate-limited lines;
   * `stateRetry` hears of each acknowledgement written (it ends a state-write outage).
   */
  constructor(
    private readonly d: SenderDeps,
    private readonly health: SinkHealth,
    private readonly failures: FailureLog,
    private readonly stateRetry: StateWriteRetry,
  ) {
    this.guard = { sink: d.name, timeoutMs: d.settings.sendTimeoutMs, maxAfterMs: d.settings.retryMaxMs };
  }

  /** Sends one batch until it is acknowledged or rejected, or the loop (run) stops. */
  async deliver(batch: SinkBatch, signal: AbortSignal): Promise<DeliverResult> {
    const { sink, name, metrics, logger, settings } = this.d;
    let attempts = 0;
    this.d.tap?.offer(name, batch);
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

  /**
   * Commits the outcome of a settled batch: the cursor moves to its last seq with the open
   * groups held after it, a rejected batch going to the dead-letter table in the same step.
   * The loop calls it in seq order, over the contiguous run of settled batches only, and
   * never with `stopped`.
   */
  settle(slot: Slot, result: DeliverResult): void {
    const { store, name, metrics } = this.d;
    if (result.kind === 'skip') {
      store.ack(name, slot.lastSeq, 0, undefined, slot.held);
    } else if (result.kind === 'ok') {
      const aside = slot.batch?.aside;
      if (aside === undefined || aside.size === 0) store.ack(name, slot.lastSeq, slot.count, result.state, slot.held);
      else this.ackSettingAside(slot, aside, result.state);
      metrics.delivered.inc({ sink: name }, slot.count - lines(aside?.keys() ?? []));
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

  /** Acknowledges a batch whose sink set entries aside, each dead-lettered alone in the same step. */
  private ackSettingAside(slot: Slot, aside: ReadonlyMap<SinkEntry, string>, state: string | undefined): void {
    const { store, name, metrics } = this.d;
    const letters = [...aside].map(([entry, error]) => ({ firstSeq: entry.seq, lastSeq: entry.seq, entries: [entry], error }));
    const count = lines(aside.keys());
    store.ackSettingAside(name, slot.lastSeq, slot.count - count, state, slot.held, letters);
    metrics.deadLetters.inc({ sink: name }, count);
    for (const { firstSeq, entries, error } of letters) this.failures.setAside({ entries: lines(entries), seq: firstSeq, error });
  }

  /** Sends a dead letter again (after `mls dlq replay`); it leaves the table once acknowledged. */
  async replay(dead: DeadLetter, installationId: string, signal: AbortSignal): Promise<void> {
    const { sink, store, name, logger, metrics } = this.d;
    const batch: SinkBatch = { id: batchId(installationId, name, dead.firstSeq, dead.lastSeq), firstSeq: dead.firstSeq, lastSeq: dead.lastSeq, entries: dead.entries };
    const { outcome, fault } = await guardedSend(sink, batch, signal, this.guard);
    if (fault !== undefined) this.health.fault(fault);
    if (outcome.status === 'ok') {
      if (outcome.state !== undefined) store.setSinkState(name, outcome.state);
      store.deleteDeadLetters([dead.id]);
      metrics.delivered.inc({ sink: name }, dead.count);
      logger.info({ sink: name, deadLetter: dead.id, entries: dead.count }, 'dead letter replayed');
    } else {
      store.keepDeadLetter(dead.id, outcome.error);
      this.failures.replayFailed({ deadLetter: dead.id, error: outcome.error });
    }
  }
}

/** Journal entries the records hold (the unit of every sink metric and of dead letters). */
function lines(records: Iterable<SinkEntry>): number {
  let n = 0;
  for (const r of records) n += r.lines ?? 1;
  return n;
}
