//! Stable batch identities: derived from the sink name and the seq range, never random,
//! so a batch rebuilt after a crash carries the same Idempotency-Key.
import { createHash } from 'node:crypto';

/** The identity of the batch covering journal seqs [firstSeq, lastSeq] for `sink`. */
export function batchId(sink: string, firstSeq: number, lastSeq: number): string {
  return createHash('sha256').update(`${sink}\u0000${firstSeq}\u0000${lastSeq}`).digest('hex').slice(0, 32);
}
