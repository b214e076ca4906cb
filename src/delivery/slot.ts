//! A batch of a delivery loop in flight (or settled, waiting for the batches before it), and
//! the helpers that make one: from a range of the journal, its entries as they are or
//! processed, recorded in flight under its key and set sending.
import type { HeldGroups, InflightBatch, StateStore } from '../journal/store.js';
import { sliceCount, type PageSlice } from '../journal/pages.js';
import type { Sink, SinkBatch } from '../sinks/contract.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Close, ProcessingStage } from './processing/stage.js';
import { journalBatch, recordBatch, type OutgoingBatch } from './batch.js';
import { batchId, legacyBatchId } from './batch-id.js';

/** How the sending of a batch ended. */
export type DeliverResult = { kind: 'ok'; state: string | undefined } | { kind: 'reject'; error: string } | { kind: 'skip' } | { kind: 'stopped' };

export function skipSlot(firstSeq: number, lastSeq: number, held: HeldGroups | undefined, heldLines: number): Slot {
  return { firstSeq, lastSeq, batch: undefined, count: 0, fetchedMs: 0, held, heldLines, done: true, result: { kind: 'skip' }, promise: Promise.resolve() };
}

/** The closes recorded with a batch in flight. */
export function parseCloses(text: string | undefined): Close[] {
  return text === undefined ? [] : (JSON.parse(text) as Close[]);
}

/** One batch in flight (or settled, waiting for the batches before it). */
export interface Slot {
  firstSeq: number;
  lastSeq: number;
  /** With processing: the open groups after the batch, committed with its cursor. */
  held: HeldGroups | undefined;
  heldLines: number;
  /** Undefined for a range with none of the sink's models (skipped). */
  batch: OutgoingBatch | undefined;
  /** Entries in the batch, and when the first of them was fetched (epoch ms). */
  count: number;
  fetchedMs: number;
  done: boolean;
  result: DeliverResult | undefined;
  promise: Promise<void>;
}

/** What making slots needs, for one run of a sink's delivery loop. */
export interface SlotRun {
  name: string;
  sink: Sink;
  store: StateStore;
  metrics: Metrics;
  installationId: string;
  /** Ends the run: its sends stop with it. */
  signal: AbortSignal;
  /** Sends one batch until it is acknowledged or rejected, or the run stops. */
  sender: { deliver(batch: SinkBatch, signal: AbortSignal): Promise<DeliverResult> };
}

/** A batch of the journal's entries as they are. */
export function plainSlot(run: SlotRun, selected: PageSlice[], firstSeq: number, lastSeq: number, again: InflightBatch | undefined): Slot {
  const { store, name, installationId } = run;
  const count = sliceCount(selected);
  if (count === 0) return skipSlot(firstSeq, lastSeq, undefined, 0);
  // A batch rebuilt after a restart keeps the key it was first sent under (one recorded
  // by schema 4 or earlier has none stored: it gets the key that version derived).
  const key = again ? (again.key ?? legacyBatchId(name, firstSeq, lastSeq)) : batchId(installationId, name, firstSeq, lastSeq);
  if (!again && run.sink.stableBatchIds !== false) store.setInflight(name, firstSeq, lastSeq, key);
  return sendSlot(run, journalBatch(key, firstSeq, lastSeq, selected), count, selected[0]!.page.fetchedMs, undefined, 0);
}

/**
 * A batch of processed records: what the lines of [firstSeq, lastSeq] and the groups the
 * models' checkpoints closed gave. Undefined for a check of closes only that closed nothing.
 * `draining`: the loop is shutting down.
 */
export function processedSlot(
  run: SlotRun,
  stage: ProcessingStage,
  selected: PageSlice[],
  firstSeq: number,
  lastSeq: number,
  again: InflightBatch | undefined,
  draining: boolean,
): Slot | undefined {
  const { store, name, metrics, installationId } = run;
  // At a shutdown the open groups close: their lines are not left waiting for the next start.
  const out = stage.build(selected, lastSeq, again ? parseCloses(again.closes) : undefined, draining);
  if (lastSeq < firstSeq && out.closes.length === 0) return undefined;
  for (const [model, n] of out.dropped) metrics.processingDropped.inc({ sink: name, model }, n);
  const held = stage.held();
  const heldLines = stage.heldLines();
  if (out.records.length === 0) return skipSlot(firstSeq, lastSeq, held, heldLines);
  const closes = out.closes.length > 0 ? JSON.stringify(out.closes) : undefined;
  const key = again ? (again.key ?? legacyBatchId(name, firstSeq, lastSeq)) : batchId(installationId, name, firstSeq, lastSeq, closes);
  if (!again && run.sink.stableBatchIds !== false) store.setInflight(name, firstSeq, lastSeq, key, closes);
  const fetchedMs = selected[0]?.page.fetchedMs ?? out.records[0]!.fetchedAtMs;
  return sendSlot(run, recordBatch(key, firstSeq, lastSeq, out.records), out.lines, fetchedMs, held, heldLines);
}

function sendSlot(run: SlotRun, batch: OutgoingBatch, count: number, fetchedMs: number, held: HeldGroups | undefined, heldLines: number): Slot {
  const slot: Slot = { firstSeq: batch.firstSeq, lastSeq: batch.lastSeq, batch, count, fetchedMs, held, heldLines, done: false, result: undefined, promise: Promise.resolve() };
  slot.promise = run.sender.deliver(batch, run.signal).then((result) => {
    slot.result = result;
    slot.done = true;
  });
  return slot;
}
