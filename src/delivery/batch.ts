//! Batches built from journal page slices (the NDJSON lines are handed over as stored, and
//! entry objects are built only if the sink reads them), and batches of processed records.
import type { NdjsonChunk, SinkBatch, SinkEntry } from '../sinks/contract.js';
import { sliceEntries, type PageSlice } from '../journal/pages.js';
import { entryToNdjson } from '../records/ndjson.js';
import { FastLine, recordOf, type BatchRecord } from './processing/fast-lines.js';

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
 * groups closed in it may hold earlier lines). Its NDJSON is rendered from the records on
 * first access, one chunk per run of records of one model; a line decided on its bytes
 * (fast-lines.ts) is made a record only if a sink reads `entries`.
 */
export function recordBatch(id: string, firstSeq: number, lastSeq: number, records: readonly BatchRecord[]): SinkBatch {
  let entries: SinkEntry[] | undefined;
  let ndjson: NdjsonChunk[] | undefined;
  return {
    id,
    firstSeq,
    lastSeq,
    get entries() {
      entries ??= records.map(recordOf);
      return entries;
    },
    get ndjson() {
      ndjson ??= recordChunks(records);
      return ndjson;
    },
  };
}

function recordChunks(records: readonly BatchRecord[]): NdjsonChunk[] {
  const chunks: NdjsonChunk[] = [];
  for (let i = 0; i < records.length; ) {
    const modelId = records[i]!.modelId;
    let end = i + 1;
    while (end < records.length && records[end]!.modelId === modelId) end++;
    const run = records.slice(i, end);
    chunks.push({ modelId, firstSeq: run[0]!.seq, bytes: ndjsonLines(run), timesNs: BigInt64Array.from(run, (r) => r.timeNs), records: true });
    i = end;
  }
  return chunks;
}

/** The records' NDJSON lines as one UTF-8 buffer, each written in place (joining them first would copy every line once more). */
function ndjsonLines(run: readonly BatchRecord[]): Buffer {
  const lines = run.map((r) => (r instanceof FastLine ? r : entryToNdjson(r)));
  let size = 0;
  for (const line of lines) size += typeof line === 'string' ? Buffer.byteLength(line) : line.size;
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) at += typeof line === 'string' ? bytes.write(line, at) : line.copyTo(bytes, at);
  return bytes;
}
