//! Batches built from journal page slices: the NDJSON lines are handed over as stored, and
//! entry objects are built only if the sink reads them.
import type { NdjsonChunk, SinkBatch, SinkEntry } from '../sinks/contract.js';
import { sliceEntries, type PageSlice } from '../journal/pages.js';

/** A batch over `slices` (in seq order, spanning [firstSeq, lastSeq]). */
export function journalBatch(id: string, firstSeq: number, lastSeq: number, slices: readonly PageSlice[]): SinkBatch {
  let entries: SinkEntry[] | undefined;
  let ndjson: NdjsonChunk[] | undefined;
  return {
    id,
    firstSeq,
    lastSeq,
    get entries() {
      entries ??= sliceEntries(slices);
      return entries;
    },
    get ndjson() {
      ndjson ??= slices.map(({ page, from, to }) => ({
        modelId: page.modelId,
        firstSeq: page.firstSeq + from,
        bytes: page.lines(from, to),
        timesNs: page.timesNs.subarray(from, to),
      }));
      return ndjson;
    },
  };
}
