//! Batches built from journal page slices (the NDJSON lines are handed over as stored, and
//! entry objects are built only if the sink reads them), and batches of processed records.
//! Each keeps the entries its sink set aside (see `SinkBatch.setAside`), to dead-letter alone.
import type { NdjsonChunk, SinkBatch, SinkEntry } from '../sinks/contract.js';
import { sliceCount, sliceEntries, type PageSlice } from '../journal/pages.js';
import { plainRecord } from '../records/entry.js';
import { entryToNdjson } from '../records/ndjson.js';
import { describeError } from '../errors.js';
import { FastLine, recordOf, type BatchRecord } from './processing/fast-lines.js';

/** A batch as the delivery loop sends it: the entries set aside, each with why. */
export interface OutgoingBatch extends SinkBatch {
  readonly aside: ReadonlyMap<SinkEntry, string>;
}

/** The entries a batch sets aside (once each, however often the batch is sent). */
function asides(): { aside: Map<SinkEntry, string>; setAside(entry: SinkEntry, reason: string): void } {
  const aside = new Map<SinkEntry, string>();
  return { aside, setAside: (entry, reason) => void (aside.has(entry) || aside.set(entry, reason)) };
}

/** A batch over `slices` (in seq order, spanning [firstSeq, lastSeq]). */
export function journalBatch(id: string, firstSeq: number, lastSeq: number, slices: readonly PageSlice[]): OutgoingBatch {
  let entries: SinkEntry[] | undefined;
  let ndjson: NdjsonChunk[] | undefined;
  return {
    id,
    firstSeq,
    lastSeq,
    count: sliceCount(slices),
    ...asides(),
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
export function recordBatch(id: string, firstSeq: number, lastSeq: number, records: readonly BatchRecord[]): OutgoingBatch {
  let entries: SinkEntry[] | undefined;
  let ndjson: NdjsonChunk[] | undefined;
  const batch: OutgoingBatch = {
    id,
    firstSeq,
    lastSeq,
    count: records.length,
    ...asides(),
    get entries() {
      entries ??= records.map(recordOf);
      return entries;
    },
    get ndjson() {
      ndjson ??= recordChunks(records, batch.setAside!);
      return ndjson;
    },
  };
  return batch;
}

function recordChunks(records: readonly BatchRecord[], setAside: (entry: SinkEntry, reason: string) => void): NdjsonChunk[] {
  const chunks: NdjsonChunk[] = [];
  for (let i = 0; i < records.length; ) {
    const modelId = records[i]!.modelId;
    const kept: BatchRecord[] = [];
    const lines: Array<string | FastLine> = [];
    for (; i < records.length && records[i]!.modelId === modelId; i++) {
      const r = records[i]!;
      const line = r instanceof FastLine ? r : ndjsonLine(r, setAside);
      if (line === undefined) continue;
      kept.push(r);
      lines.push(line);
    }
    if (kept.length > 0) chunks.push({ modelId, firstSeq: kept[0]!.seq, bytes: utf8Lines(lines), timesNs: BigInt64Array.from(kept, (r) => r.timeNs), records: true });
  }
  return chunks;
}

/** A record's NDJSON line; as plain text when it cannot be written whole; undefined, set aside, when not even so. */
function ndjsonLine(r: SinkEntry, setAside: (entry: SinkEntry, reason: string) => void): string | undefined {
  try {
    return entryToNdjson(r);
  } catch {
    try {
      return entryToNdjson(plainRecord(r));
    } catch (err) {
      setAside(r, `the record cannot be written as JSON: ${describeError(err)}`);
      return undefined;
    }
  }
}

/** The lines as one UTF-8 buffer, each written in place (joining them first would copy every line once more). */
function utf8Lines(lines: ReadonlyArray<string | FastLine>): Buffer {
  let size = 0;
  for (const line of lines) size += typeof line === 'string' ? Buffer.byteLength(line) : line.size;
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) at += typeof line === 'string' ? bytes.write(line, at) : line.copyTo(bytes, at);
  return bytes;
}
