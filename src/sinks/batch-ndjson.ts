//! The NDJSON lines of a batch, for the sinks that write lines: as the journal handed them
//! over, or rendered from the entries of a batch that brings none (a dead letter sent again).
import type { NdjsonChunk, SinkBatch } from './contract.js';
import { entryToNdjson } from '../records/ndjson.js';

/** The batch's lines as chunks: its own, or one chunk per entry. */
export function batchChunks(batch: SinkBatch): readonly NdjsonChunk[] {
  return batch.ndjson ?? batch.entries.map((e) => ({ modelId: e.modelId, firstSeq: e.seq, bytes: Buffer.from(entryToNdjson(e)), timesNs: BigInt64Array.of(e.timeNs) }));
}
