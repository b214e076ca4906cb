//! Stable batch identities (the webhook's Idempotency-Key): derived from the state file's
//! installation id, the sink name and the seq range, never random, so a batch rebuilt after
//! a crash carries the same key, and two installations (or a state file started afresh)
//! never send different batches under one key.
import { createHash } from 'node:crypto';

/**
 * The identity of the batch covering journal seqs [firstSeq, lastSeq] for `sink` of one
 * installation; with processing, also of the multiline groups it closed besides its lines
 * (`closes`, as recorded with the batch), which are part of its content.
 */
export function batchId(installationId: string, sink: string, firstSeq: number, lastSeq: number, closes?: string): string {
  const base = `${installationId}\u0000${sink}\u0000${firstSeq}\u0000${lastSeq}`;
  return digest(closes === undefined ? base : `${base}\u0000${closes}`);
}

/**
 * The identity state schema 4 and earlier gave a batch (sink name and seq range only): a
 * batch such a version left in flight is sent again under it after the upgrade.
 */
export function legacyBatchId(sink: string, firstSeq: number, lastSeq: number): string {
  return digest(`${sink}\u0000${firstSeq}\u0000${lastSeq}`);
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
