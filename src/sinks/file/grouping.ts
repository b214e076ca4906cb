//! Which file each line of a batch goes to: the batch's lines grouped by rendered path,
//! as pieces of whole lines in first-seen order.
import type { SinkBatch } from '../contract.js';
import { batchChunks } from '../batch-ndjson.js';
import type { CompiledTemplate } from './template.js';

const NEWLINE = 0x0a;

/**
 * Bytes per rendered path, in first-seen order, as pieces of whole lines; entries at or
 * below `doneSeq` are already in the files (a batch starting after it is new throughout:
 * a batch of records may hold lines of groups opened before it). The lines are taken as
 * they are: only the path is worked out, once per run of lines sharing it.
 */
export function groupByPath(batch: SinkBatch, committedSeq: number, template: CompiledTemplate): Map<string, Buffer[]> {
  const doneSeq = batch.firstSeq > committedSeq ? Number.NEGATIVE_INFINITY : committedSeq;
  const groups = new Map<string, Buffer[]>();
  const add = (path: string, bytes: Buffer): void => {
    const pieces = groups.get(path);
    if (pieces === undefined) groups.set(path, [bytes]);
    else pieces.push(bytes);
  };
  for (const c of batchChunks(batch)) {
    const n = c.timesNs.length;
    const from = c.records ? 0 : Math.max(0, doneSeq - c.firstSeq + 1);
    if (from >= n) continue;
    let at = 0;
    for (let i = 0; i < from; i++) at = c.bytes.indexOf(NEWLINE, at) + 1;
    if (!template.usesTime) {
      add(template.render(c.modelId, 0), at === 0 ? c.bytes : c.bytes.subarray(at));
      continue;
    }
    let runStart = at;
    let runPath = template.render(c.modelId, Number(c.timesNs[from]! / 1_000_000n));
    for (let i = from; i < n; i++) {
      const path = template.render(c.modelId, Number(c.timesNs[i]! / 1_000_000n));
      if (path !== runPath) {
        add(runPath, c.bytes.subarray(runStart, at));
        runStart = at;
        runPath = path;
      }
      at = c.bytes.indexOf(NEWLINE, at) + 1;
    }
    add(runPath, c.bytes.subarray(runStart, at));
  }
  return groups;
}
