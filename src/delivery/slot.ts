//! A batch of a delivery loop in flight (or settled, waiting for the batches before it), and
//! the small helpers that make one.
import type { HeldGroups } from '../journal/store.js';
import type { SinkBatch } from '../sinks/contract.js';
import type { Close } from './processing/stage.js';

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
  batch: SinkBatch | undefined;
  /** Entries in the batch, and when the first of them was fetched (epoch ms). */
  count: number;
  fetchedMs: number;
  done: boolean;
  result: DeliverResult | undefined;
  promise: Promise<void>;
}
