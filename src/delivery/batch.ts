//! Batches built from journal page slices: the NDJSON lines are handed over as stored, and
//! entry objects are built only if the sink reads them.
import type { NdjsonChunk, SinkBatch, SinkEntry } from '../sinks/contract.js';
import { sliceCount, sliceEntries, type JournalPage, type PageSlice } from '../journal/pages.js';
import { RecordList } from './processing/record-list.js';
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
    count: sliceCount(slices),
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
 * chunk per run of records of one model: a compact record (one line, nothing added but a
 * level) copies its page's line; its object is made only if a sink reads `entries`.
 */
export function recordBatch(id: string, firstSeq: number, lastSeq: number, records: RecordList | readonly SinkEntry[]): SinkBatch {
  const list = records instanceof RecordList ? records : RecordList.of(records);
  let ndjson: NdjsonChunk[] | undefined;
  return {
    id,
    firstSeq,
    lastSeq,
    count: list.length,
    get entries() {
      return list.entries();
    },
    get ndjson() {
      ndjson ??= recordChunks(list);
      return ndjson;
    },
  };
}

/** `,"level":"<level>"}\n` for each level (the last: none, `}\n`), replacing a journal line's closing `}\n`. */
const LEVEL_ENDS = [...LEVELS.map((l) => Buffer.from(`,"level":"${l}"}\n`)), Buffer.from('}\n')];

function recordChunks(list: RecordList): NdjsonChunk[] {
  const chunks: NdjsonChunk[] = [];
  const n = list.length;
  for (let i = 0; i < n; ) {
    const modelId = list.modelId(i);
    let end = i + 1;
    while (end < n && list.modelId(end) === modelId) end++;
    // Sizes first, then one buffer.
    let rendered: Array<string | undefined> | undefined;
    let size = 0;
    for (let k = i; k < end; k++) {
      const page = list.page(k);
      if (page === undefined) {
        rendered ??= new Array(end - i);
        const line = entryToNdjson(list.object(k)!);
        rendered[k - i] = line;
        size += Buffer.byteLength(line);
      } else {
        const at = list.index(k);
        const starts = page.starts();
        size += starts[at + 1]! - starts[at]! - 2 + LEVEL_ENDS[list.levelIndex(k)]!.length;
      }
    }
    const bytes = Buffer.allocUnsafe(size);
    const timesNs = new BigInt64Array(end - i);
    let pos = 0;
    for (let k = i; k < end; ) {
      const page = list.page(k);
      if (page === undefined) {
        timesNs[k - i] = list.timeNs(k);
        pos += bytes.write(rendered![k - i]!, pos);
        k++;
        continue;
      }
      // A run of consecutive lines of one page.
      const first = list.index(k);
      let last = k + 1;
      while (last < end && list.page(last) === page && list.index(last) === first + (last - k)) last++;
      timesNs.set(page.timesNs.subarray(first, first + (last - k)), k - i);
      pos = copyRun(list, k, last, page, bytes, pos);
      k = last;
    }
    chunks.push({ modelId, firstSeq: list.seq(i), bytes, timesNs, records: true });
    i = end;
  }
  return chunks;
}

/**
 * Writes records [k, last) of `list`, consecutive lines of `page`, to `target` at `pos`, each
 * with its level's ending; returns the end. The lines are copied at once to the end of their
 * place, then each moved to where it goes (the lines only grow, so a line is moved before
 * what is written overwrites it): one copy of the bytes, and no view made per line.
 */
function copyRun(list: RecordList, k: number, last: number, page: JournalPage, target: Buffer, pos: number): number {
  const starts = page.starts();
  const first = list.index(k);
  const from = starts[first]!;
  const to = starts[first + (last - k)]!;
  let grown = 0;
  for (let r = k; r < last; r++) grown += LEVEL_ENDS[list.levelIndex(r)]!.length - 2;
  let read = pos + grown;
  target.set(page.bytes.subarray(from, to), read);
  for (let r = k; r < last; r++) {
    const at = first + (r - k);
    const body = starts[at + 1]! - starts[at]! - 2;
    target.copyWithin(pos, read, read + body);
    pos += body;
    read += body + 2;
    const ending = LEVEL_ENDS[list.levelIndex(r)]!;
    target.set(ending, pos);
    pos += ending.length;
  }
  return pos;
}
