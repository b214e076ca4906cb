//! Names of rotated files, and their gzip compression: compressed to a temporary name,
//! made durable, renamed into place, and only then the original removed, so a crash at
//! any point leaves either the original or a complete `.gz`.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { fsyncDir } from './handles.js';

/** `yyyymmddTHHMMSSZ` of an epoch-ms instant, UTC. */
export function rotationStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]|\.\d+/g, '');
}

/**
 * The name a file is rotated to: the stamp goes before the last extension, so
 * `2026-11-22.ndjson` rotated at 10:15:00 becomes `2026-11-22.20261122T101500Z.ndjson`;
 * a `.N` counter is added while the name (or its `.gz`) is `taken`.
 */
export function rotatedName(path: string, nowMs: number, taken: (candidate: string) => boolean): string {
  const base = basename(path);
  // A leading dot starts no extension.
  const dot = base.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
  const stamp = rotationStamp(nowMs);
  for (let n = 0; ; n++) {
    const candidate = join(dirname(path), `${stem}.${stamp}${n === 0 ? '' : '.' + n}${ext}`);
    if (!taken(candidate)) return candidate;
  }
}

/** What {@link rotationStamp} renders, `#` standing for each digit. */
export const ROTATION_STAMP_SHAPE = '########T######Z';

/** The compressed name of a rotated file. */
export function gzName(path: string): string {
  return path + '.gz';
}

/** The temporary name a rotated file is compressed to. */
export function gzTempName(path: string): string {
  return path + '.gz.tmp';
}

/** Gzips `path` to `path.gz` and removes `path`. */
export async function compressFile(path: string, opts: { fileMode: number; sync: boolean }): Promise<void> {
  const tmp = gzTempName(path);
  try {
    // `flush` fsyncs the compressed file before the pipeline ends
    await pipeline(createReadStream(path), createGzip(), createWriteStream(tmp, { mode: opts.fileMode, flush: opts.sync }));
    await rename(tmp, gzName(path));
    if (opts.sync) await fsyncDir(dirname(path));
  } catch (err) {
    // Best effort: a temporary file left behind is removed at the next start (reconcile), and the original error is the one to report.
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await unlink(path);
  if (opts.sync) await fsyncDir(dirname(path));
}
