//! Batches built from journal page slices: the NDJSON lines are handed over as stored, and
//! entry objects are built only if the sink reads them.
import type { NdjsonChunk, SinkBatch, SinkEntry } from '../sinks/contract.js';
import { sliceEntries, type JournalPage, type PageSlice } from '../journal/pages.js';
import { LEVELS } from '../processing/types.js';
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
 * chunk per run of records of one model; a record whose `sources` entry is its journal page
 * (one line, nothing added but a level) reuses the page's line.
 */
export function recordBatch(id: string, firstSeq: number, lastSeq: number, records: SinkEntry[], sources?: ReadonlyArray<JournalPage | undefined>): SinkBatch {
  let ndjson: NdjsonChunk[] | undefined;
  return {
    id,
    firstSeq,
    lastSeq,
    entries: records,
    get ndjson() {
      ndjson ??= recordChunks(records, sources);
      return ndjson;
    },
  };
}

/** `,"level":"<level>"}\n` for each level, replacing a journal line's closing `}\n`. */
const LEVEL_ENDS = new Map(LEVELS.map((l) => [l, Buffer.from(`,"level":"${l}"}\n`)]));

function recordChunks(records: readonly SinkEntry[], sources: ReadonlyArray<JournalPage | undefined> | undefined): NdjsonChunk[] {
  const chunks: NdjsonChunk[] = [];
  for (let i = 0; i < records.length; ) {
    const modelId = records[i]!.modelId;
    let end = i + 1;
    while (end < records.length && records[end]!.modelId === modelId) end++;
    // Sizes first, then one buffer: a reused journal line is copied, with its level's ending.
    const rendered: Array<string | undefined> = new Array(end - i);
    let size = 0;
    for (let k = i; k < end; k++) {
      const r = records[k]!;
      const page = sources?.[k];
      if (page === undefined) {
        const line = entryToNdjson(r);
        rendered[k - i] = line;
        size += Buffer.byteLength(line);
      } else {
        const at = r.seq - page.firstSeq;
        size += page.size(at, at + 1) + (r.level === undefined ? 0 : LEVEL_ENDS.get(r.level)!.length - 2);
      }
    }
    const bytes = Buffer.allocUnsafe(size);
    const timesNs = new BigInt64Array(end - i);
    let pos = 0;
    for (let k = i; k < end; k++) {
      const r = records[k]!;
      timesNs[k - i] = r.timeNs;
      const line = rendered[k - i];
      if (line !== undefined) {
        pos += bytes.write(line, pos);
        continue;
      }
      const page = sources![k]!;
      const at = r.seq - page.firstSeq;
      const starts = page.starts();
      const from = starts[at]!;
      const to = starts[at + 1]!;
      if (r.level === undefined) pos += page.bytes.copy(bytes, pos, from, to);
      else {
        pos += page.bytes.copy(bytes, pos, from, to - 2);
        pos += LEVEL_ENDS.get(r.level)!.copy(bytes, pos);
      }
    }
    chunks.push({ modelId, firstSeq: records[i]!.seq, bytes, timesNs, records: true });
    i = end;
  }
  return chunks;
}
