//! Makes the files on disk match the committed state: completes renames that a crash
//! interrupted, removes what compression left half done, and cuts every file back to its
//! committed offset, so a replayed batch lands exactly once. A file new to the state is
//! adopted as found.
import { existsSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SinkContext } from '../contract.js';
import { fsyncDir } from './handles.js';
import { sizeOf } from './io-errors.js';
import { gzName, gzTempName } from './rotation.js';
import type { FileSinkState } from './state.js';

/**
 * Brings the disk in line with `state`, and `state` in line with what cannot be matched
 * (a file shorter than committed, or gone), which is adopted as found. Mutates `state`.
 * `sync`: whether its writes are made durable.
 */
export async function matchDisk(state: FileSinkState, ctx: SinkContext, sync: boolean): Promise<void> {
  const { logger: log, name: sink } = ctx;
  const kept: typeof state.rotated = [];
  for (const rot of state.rotated) {
    let size = await sizeOf(rot.path);
    if (existsSync(gzName(rot.path))) {
      // Compressed completely; the crash may have come before the original was removed.
      if (size !== undefined) await unlink(rot.path);
      await unlink(gzTempName(rot.path)).catch(() => undefined); // an unfinished compression's leftover; absent is fine
      continue;
    }
    if (size === undefined && !rot.renamed) {
      size = await sizeOf(rot.from);
      if (size !== undefined) {
        await rename(rot.from, rot.path);
        if (sync) await fsyncDir(dirname(rot.path));
        log.info({ sink, from: rot.from, to: rot.path }, 'Completed a rotation interrupted by a crash.');
      }
    }
    if (size === undefined) {
      if (rot.off > 0) log.error({ sink, path: rot.path, bytes: rot.off }, 'A rotated output file is missing; its lines are lost.');
      continue;
    }
    rot.renamed = true;
    await unlink(gzTempName(rot.path)).catch(() => undefined); // an unfinished compression's leftover; absent is fine
    rot.off = await cutBack(rot.path, size, rot.off, ctx, sync);
    if (rot.off === 0) {
      await unlink(rot.path);
      continue;
    }
    kept.push(rot);
  }
  state.rotated = kept;
  for (const [path, file] of Object.entries(state.files)) {
    const size = await sizeOf(path);
    if (size === undefined) {
      if (file.off > 0) log.error({ sink, path, bytes: file.off }, 'An output file is missing; it will be started again.');
      file.off = 0;
      continue;
    }
    file.off = await cutBack(path, size, file.off, ctx, sync);
  }
}

/** Truncates `path` (of `size` bytes) to `committed`; returns the offset to adopt. */
async function cutBack(path: string, size: number, committed: number, ctx: SinkContext, sync: boolean): Promise<number> {
  if (size === committed) return committed;
  if (size < committed) {
    ctx.logger.error(
      { sink: ctx.name, path, committed, size },
      'An output file is shorter than committed (truncated by someone else, or lost on power failure with fsync "never"); continuing from its end.',
    );
    return size;
  }
  const fh = await open(path, 'r+');
  try {
    await fh.truncate(committed);
    if (sync) await fh.sync();
  } finally {
    await fh.close();
  }
  ctx.logger.info({ sink: ctx.name, path, bytes: size - committed }, 'Removed uncommitted bytes from an output file.');
  return committed;
}

/**
 * Adds `path` (open as `fh`) to `state` at its size, and
 * returns that size: bytes already in it are kept, never cut. Bytes last changed before the
 * state began were written under an earlier state file, or by something else: no offset of
 * this state covers them, and entries read again into a new state file may repeat lines they
 * hold. They are said once, at error level, and counted.
 */
export async function adoptFile(path: string, fh: FileHandle, state: FileSinkState, now: number, ctx: SinkContext): Promise<number> {
  const st = await fh.stat();
  if (st.size > 0 && st.mtimeMs < (state.since ?? 0)) {
    ctx.logger.error(
      { sink: ctx.name, path, bytes: st.size },
      'An output file holds bytes written before this sink\'s state began (a new state file?); they are kept and new lines are appended after them, so lines may repeat. See "Output files hold bytes the state does not know" in docs/operating.md.',
    );
    ctx.unknownBytes?.(st.size);
  }
  // a file just created is empty: it starts now
  state.files[path] = { off: st.size, created: st.size === 0 ? now : Math.min(now, st.birthtimeMs > 0 ? st.birthtimeMs : now) };
  return st.size;
}
