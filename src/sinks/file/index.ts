//! The file sink: NDJSON appended to files named by a path template, exactly once
//! across `kill -9`. Each batch returns, as its state, the byte offset of every file it
//! wrote; the delivery loop commits that with the cursor in one transaction. On open
//! (and after any failed write) the files are cut back to the committed offsets and
//! half-done rotations are completed, so a replayed batch lands exactly once.
import type { Sink, SinkContext } from '../contract.js';
import { FileSink, type FileSinkOptions, type FileSinkTuning } from './sink.js';

export type { FileSinkOptions, FileSinkTuning } from './sink.js';

/**
 * Opens a file sink. `ctx.state` is the state last committed with the cursor; the files
 * are reconciled with it before the sink is returned. I/O errors never make this throw:
 * reconciliation is retried before the next batch, which reports `retry` until it succeeds.
 * With `ctx.checkOnly` nothing is opened: the sink can only answer its healthcheck.
 */
export async function createFileSink(config: FileSinkOptions, ctx: SinkContext, tuning: FileSinkTuning = {}): Promise<Sink> {
  const sink = new FileSink(config, ctx, tuning);
  if (!ctx.checkOnly) await sink.open();
  return sink;
}
