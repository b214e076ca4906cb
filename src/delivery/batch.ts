//! Batches built from journal page slices: the NDJSON lines are handed over as stored, and
//! entry objects are built only if the sink reads them.
import type { NdjsonChunk, SinkBatch, SinkEntry } from '../sinks/contract.js';
import { sliceEntries, type PageSlice } from '../journal/pages.js';
import { entryToNdjson } from '../records/ndjson.js';

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

/**
 * A batch of processed records over journal seqs [firstSeq, lastSeq] (the records of
 * groups closed in it may hold earlier lines). Its NDJSON is rendered on first access, one
 * chunk per run of records of one model.
 */
export function recordBatch(id: string, firstSeq: number, lastSeq: number, records: SinkEntry[]): SinkBatch {
  let ndjson: NdjsonChunk[] | undefined;
  return {
    id,
    firstSeq,
    lastSeq,
    entries: records,
    get ndjson() {
      ndjson ??= recordChunks(records);
      return ndjson;
    },
  };
}

function recordChunks(records: readonly SinkEntry[]): NdjsonChunk[] {
  const chunks: NdjsonChunk[] = [];
  for (let i = 0; i < records.length; ) {
    const modelId = records[i]!.modelId;
    let end = i + 1;
    while (end < records.length && records[end]!.modelId === modelId) end++;
    const text: string[] = new Array(end - i);
    const timesNs = new BigInt64Array(end - i);
    for (let k = i; k < end; k++) {
      text[k - i] = entryToNdjson(records[k]!);
      timesNs[k - i] = records[k]!.timeNs;
    }
    chunks.push({ modelId, firstSeq: records[i]!.seq, bytes: Buffer.from(text.join('')), timesNs, records: true });
    i = end;
  }
  return chunks;
}
