//! The file sink: NDJSON appended to files named by a path template, exactly once
//! across `kill -9`. Each batch returns, as its state, the byte offset of every file it
//! wrote; the delivery loop commits that with the cursor in one transaction. On open
//! (and after any failed write) the files are cut back to the committed offsets and
//! half-done rotations are completed, so a replayed batch lands exactly once.
import { constants, existsSync } from 'node:fs';
import { access, open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Sink, SinkBatch, SinkContext, SendOutcome } from '../contract.js';
import { describeError, fileErrorFix } from '../../errors.js';
import { entryToNdjson } from '../format.js';
import { FileHandles, fsyncDir } from './handles.js';
import { writeAll } from './gather.js';
import { compressFile, gzName, gzTempName, rotatedName } from './rotation.js';
import { cloneState, parseState, serializeState, type FileSinkState } from './state.js';
import { compileTemplate, type CompiledTemplate } from './template.js';

export { compileTemplate, validateTemplate, sanitizeModelId } from './template.js';
export type { FileSinkState } from './state.js';

/** Options of the file sink (the `file` sink's config block, already validated). */
export interface FileSinkOptions {
  /** Path template: `{model_id}` and UTC time codes `%Y %m %d %H %M %S %j %%` of each entry's time. */
  path: string;
  /** `always`: after every write; `batch`: each touched file once per batch; `never`: leave it to the OS. */
  fsync: 'always' | 'batch' | 'never';
  /** Rotate a file once it would exceed `max_bytes`, or `max_age` ms after it was started. */
  rotate?: { max_bytes?: number; max_age?: number };
  /** Compress rotated files in the background. */
  compress: 'none' | 'gzip';
  /** Mode of created files (subject to the umask). */
  file_mode: number;
  /** Mode of created directories (subject to the umask). */
  dir_mode: number;
}

/** Internal limits, for tests and tuning; not part of the config. */
export interface FileSinkTuning {
  /** Most descriptors kept open at once. Default 64. */
  maxOpenFiles?: number;
  /** A file not written for this long is closed and forgotten by the state. Default 5 min. */
  idleCloseMs?: number;
}

const ERROR_LOG_INTERVAL_MS = 60_000;
const NEWLINE = 0x0a;
const COMPRESS_RETRY_MS = 60_000;

function errCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function retryDelayMs(code: string | undefined): number {
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
      return 10_000;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 30_000;
    default:
      return 5_000;
  }
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if (errCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Opens a file sink. `ctx.state` is the state last committed with the cursor; the files
 * are reconciled with it before the sink is returned. I/O errors never make this throw:
 * reconciliation is retried before the next batch, which reports `retry` until it succeeds.
 */
export async function createFileSink(config: FileSinkOptions, ctx: SinkContext, tuning: FileSinkTuning = {}): Promise<Sink> {
  const sink = new FileSink(config, ctx, tuning);
  await sink.open();
  return sink;
}

class FileSink implements Sink {
  /** Replays are made harmless by truncating to the committed offset, not by batch identity. */
  readonly stableBatchIds = false;
  readonly #cfg: FileSinkOptions;
  readonly #ctx: SinkContext;
  readonly #template: CompiledTemplate;
  readonly #handles: FileHandles;
  readonly #idleCloseMs: number;
  readonly #sync: boolean;
  /** The state believed committed: the last one returned with `ok` or passed to `commitState`. */
  #durable: FileSinkState;
  /** Set after a failure: the files must be reconciled with `#durable` before the next write. */
  #dirty = true;
  /** Files written in the batch in progress. */
  #touched = new Set<string>();
  /** Last write per path, in monotonic ms; drives forgetting idle files. */
  #lastWrite = new Map<string, number>();
  #chain: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #errorLoggedAt = new Map<string, number>();
  #compressQueue: string[] = [];
  #compressQueued = new Set<string>();
  #compressed = new Set<string>();
  #compressFailedAt = new Map<string, number>();
  #compressing: Promise<void> | undefined;

  constructor(cfg: FileSinkOptions, ctx: SinkContext, tuning: FileSinkTuning) {
    this.#cfg = cfg;
    this.#ctx = ctx;
    // Resolved once: placeholders render to single segments that can never be `.` or `..`.
    this.#template = compileTemplate(resolve(cfg.path));
    this.#sync = cfg.fsync !== 'never';
    this.#idleCloseMs = tuning.idleCloseMs ?? 300_000;
    this.#durable = parseState(ctx.state);
    this.#handles = new FileHandles({
      max: Math.max(1, tuning.maxOpenFiles ?? 64),
      fileMode: cfg.file_mode,
      dirMode: cfg.dir_mode,
      syncDirs: this.#sync,
      beforeEvict: async (path, fh) => {
        if (this.#sync && this.#touched.has(path)) await fh.sync();
      },
    });
  }

  async open(): Promise<void> {
    if (this.#ctx.commitState === undefined) {
      this.#ctx.logger.warn(
        { sink: this.#ctx.name },
        'The delivery loop cannot commit file sink state on its own; a crash right after starting a new file may duplicate lines in it.',
      );
    }
    try {
      await this.#reconcile();
      this.#finalizeRotations();
    } catch (err) {
      this.#logIoError(err, 'Could not reconcile the output files with the committed state; will retry before the next batch.');
    }
    this.#timer = setInterval(() => {
      void this.#exclusive(() => this.#forgetIdle());
    }, Math.max(1_000, Math.floor(this.#idleCloseMs / 2)));
    this.#timer.unref();
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** How errors name the setting to change. */
  get #setting(): string {
    return `the path of sink ${this.#ctx.name}`;
  }

  #logIoError(err: unknown, msg: string): void {
    const key = errCode(err) ?? 'other';
    const now = performance.now();
    const last = this.#errorLoggedAt.get(key);
    const payload = { sink: this.#ctx.name, code: errCode(err), err: describeError(err), fix: fileErrorFix(err, this.#setting) };
    if (last === undefined || now - last >= ERROR_LOG_INTERVAL_MS) {
      this.#errorLoggedAt.set(key, now);
      this.#ctx.logger.error(payload, msg);
    } else {
      this.#ctx.logger.debug(payload, msg);
    }
  }

  // ---- reconciliation -------------------------------------------------------------

  /**
   * Makes the files on disk match `#durable`: completes renames, cuts uncommitted tails.
   * What cannot be matched (a file shorter than committed, or gone) is adopted as found,
   * and that adoption committed at once, so a crash before the next batch's commit does
   * not measure the next batch's lines against offsets that no longer hold.
   */
  async #reconcile(): Promise<void> {
    const before = serializeState(this.#durable);
    await this.#matchDisk();
    const after = serializeState(this.#durable);
    if (after !== before) this.#ctx.commitState?.(after);
    this.#dirty = false;
  }

  async #matchDisk(): Promise<void> {
    if (this.#compressing !== undefined) await this.#compressing;
    await this.#handles.closeAll();
    const log = this.#ctx.logger;
    const sink = this.#ctx.name;
    const state = this.#durable;
    const kept: typeof state.rotated = [];
    for (const rot of state.rotated) {
      const gz = gzName(rot.path);
      let size = await sizeOf(rot.path);
      if (size === undefined && existsSync(gz)) {
        await unlink(gzTempName(rot.path)).catch(() => undefined);
        continue;
      }
      if (size !== undefined && existsSync(gz)) {
        // Compressed completely; the crash came before the original was removed.
        await unlink(rot.path);
        continue;
      }
      if (size === undefined && !rot.renamed) {
        size = await sizeOf(rot.from);
        if (size !== undefined) {
          await rename(rot.from, rot.path);
          if (this.#sync) await fsyncDir(dirname(rot.path));
          log.info({ sink, from: rot.from, to: rot.path }, 'Completed a rotation interrupted by a crash.');
        }
      }
      if (size === undefined) {
        if (rot.off > 0) log.error({ sink, path: rot.path, bytes: rot.off }, 'A rotated output file is missing; its lines are lost.');
        continue;
      }
      rot.renamed = true;
      await unlink(gzTempName(rot.path)).catch(() => undefined);
      rot.off = await this.#cutBack(rot.path, size, rot.off);
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
      file.off = await this.#cutBack(path, size, file.off);
    }
  }

  /** Truncates `path` (of `size` bytes) to `committed`; returns the offset to adopt. */
  async #cutBack(path: string, size: number, committed: number): Promise<number> {
    if (size === committed) return committed;
    if (size < committed) {
      this.#ctx.logger.error(
        { sink: this.#ctx.name, path, committed, size },
        'An output file is shorter than committed (truncated by someone else, or lost on power failure with fsync "never"); continuing from its end.',
      );
      return size;
    }
    const fh = await open(path, 'r+');
    try {
      await fh.truncate(committed);
      if (this.#sync) await fh.sync();
    } finally {
      await fh.close();
    }
    this.#ctx.logger.info({ sink: this.#ctx.name, path, bytes: size - committed }, 'Removed uncommitted bytes from an output file.');
    return committed;
  }

  /**
   * Rotated files in `#durable` are final: their last bytes are committed and nothing is
   * appended to them any more. Forget them, or hand them to compression.
   */
  #finalizeRotations(): void {
    const state = this.#durable;
    state.rotated = state.rotated.filter((r) => !this.#compressed.has(r.path));
    this.#compressed.clear();
    if (this.#cfg.compress !== 'gzip') {
      state.rotated = [];
      return;
    }
    const now = performance.now();
    for (const rot of state.rotated) {
      if (this.#compressQueued.has(rot.path)) continue;
      const failed = this.#compressFailedAt.get(rot.path);
      if (failed !== undefined && now - failed < COMPRESS_RETRY_MS) continue;
      this.#compressQueued.add(rot.path);
      this.#compressQueue.push(rot.path);
    }
    this.#pumpCompression();
  }

  #pumpCompression(): void {
    if (this.#compressing !== undefined || this.#compressQueue.length === 0) return;
    this.#compressing = (async () => {
      for (let path = this.#compressQueue.shift(); path !== undefined; path = this.#compressQueue.shift()) {
        try {
          await compressFile(path, { fileMode: this.#cfg.file_mode, sync: this.#sync });
          this.#compressed.add(path);
          this.#compressFailedAt.delete(path);
        } catch (err) {
          this.#compressFailedAt.set(path, performance.now());
          this.#logIoError(err, 'Could not compress a rotated file; will try again.');
        } finally {
          this.#compressQueued.delete(path);
        }
      }
    })().finally(() => {
      this.#compressing = undefined;
      this.#pumpCompression();
    });
  }

  /** Closes files idle for `idleCloseMs` and drops them from the state (all their bytes are committed). */
  async #forgetIdle(): Promise<void> {
    if (this.#dirty || this.#closing !== undefined) return;
    await this.#handles.closeIdle(this.#idleCloseMs);
    const limit = performance.now() - this.#idleCloseMs;
    for (const path of Object.keys(this.#durable.files)) {
      if (this.#handles.has(path)) continue;
      const last = this.#lastWrite.get(path);
      if (last !== undefined && last > limit) continue;
      if (last === undefined) {
        // Known from the committed state only: give it one idle period from now.
        this.#lastWrite.set(path, performance.now());
        continue;
      }
      delete this.#durable.files[path];
      this.#lastWrite.delete(path);
    }
  }

  // ---- delivery -------------------------------------------------------------------

  send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> {
    if (signal.aborted) return Promise.resolve({ status: 'retry', error: 'aborted' });
    return this.#exclusive(() => this.#send(batch));
  }

  async #send(batch: SinkBatch): Promise<SendOutcome> {
    if (this.#closing !== undefined) return { status: 'retry', error: 'the file sink is closed' };
    try {
      if (this.#dirty) await this.#reconcile();
      this.#finalizeRotations();
      await this.#forgetIdle();
      const work = cloneState(this.#durable);
      /** Committed offset of every path the batch may touch. */
      const base = new Map<string, number>();
      for (const [p, f] of Object.entries(work.files)) base.set(p, f.off);
      for (const r of work.rotated) base.set(r.path, r.off);

      const groups = this.#group(batch, work.seq);
      const now = this.#ctx.now();

      const unknown = [...groups.keys()].filter((p) => work.files[p] === undefined);
      if (unknown.length > 0) {
        for (const path of unknown) {
          const { fh, created } = await this.#handles.acquire(path);
          const st = await fh.stat();
          const born = created || st.size === 0 ? now : Math.min(now, st.birthtimeMs > 0 ? st.birthtimeMs : now);
          work.files[path] = { off: st.size, created: born };
          base.set(path, st.size);
        }
        this.#commit(work, base);
      }

      this.#touched.clear();
      for (const [path, lines] of groups) await this.#writeGroup(path, lines, work, base, now);
      if (this.#cfg.fsync === 'batch') {
        for (const path of this.#touched) await this.#handles.peek(path)?.sync();
      }
      this.#touched.clear();

      work.seq = Math.max(work.seq, batch.lastSeq);
      work.rotated = work.rotated.filter((r) => !this.#compressed.has(r.path));
      this.#durable = work;
      return { status: 'ok', state: serializeState(work) };
    } catch (err) {
      this.#touched.clear();
      this.#dirty = true;
      this.#logIoError(err, 'Could not write to the output files; the batch will be retried.');
      try {
        await this.#reconcile();
      } catch (again) {
        this.#logIoError(again, 'Could not cut the output files back to the committed state; will retry.');
      }
      const fix = fileErrorFix(err, this.#setting);
      return { status: 'retry', afterMs: retryDelayMs(errCode(err)), error: `${describeError(err)}${fix ? `; ${fix}` : ''}` };
    }
  }

  /**
   * Bytes per rendered path, in first-seen order, as pieces of whole lines; entries at or
   * below `doneSeq` are already in the files. Batches read from the journal bring their
   * lines ready-made: only the path is worked out, once per run of lines sharing it.
   */
  #group(batch: SinkBatch, doneSeq: number): Map<string, Buffer[]> {
    const groups = new Map<string, Buffer[]>();
    const add = (path: string, bytes: Buffer): void => {
      const pieces = groups.get(path);
      if (pieces === undefined) groups.set(path, [bytes]);
      else pieces.push(bytes);
    };
    const chunks = batch.ndjson;
    if (chunks === undefined) {
      const lines = new Map<string, string[]>();
      for (const e of batch.entries) {
        if (e.seq <= doneSeq) continue;
        const path = this.#template.render(e.modelId, Number(e.timeNs / 1_000_000n));
        const list = lines.get(path);
        if (list === undefined) lines.set(path, [entryToNdjson(e)]);
        else list.push(entryToNdjson(e));
      }
      for (const [path, list] of lines) add(path, Buffer.from(list.join('')));
      return groups;
    }
    for (const c of chunks) {
      const n = c.timesNs.length;
      const from = Math.max(0, doneSeq - c.firstSeq + 1);
      if (from >= n) continue;
      let at = 0;
      for (let i = 0; i < from; i++) at = c.bytes.indexOf(NEWLINE, at) + 1;
      if (!this.#template.usesTime) {
        add(this.#template.render(c.modelId, 0), at === 0 ? c.bytes : c.bytes.subarray(at));
        continue;
      }
      let runStart = at;
      let runPath = this.#template.render(c.modelId, Number(c.timesNs[from]! / 1_000_000n));
      for (let i = from; i < n; i++) {
        const path = this.#template.render(c.modelId, Number(c.timesNs[i]! / 1_000_000n));
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

  /** Stores structural changes (new files, rotations) with every offset at its committed value. */
  #commit(work: FileSinkState, base: Map<string, number>): void {
    const snap = cloneState(work);
    for (const [p, f] of Object.entries(snap.files)) f.off = base.get(p) ?? f.off;
    for (const r of snap.rotated) r.off = base.get(r.path) ?? r.off;
    snap.rotated = snap.rotated.filter((r) => !this.#compressed.has(r.path));
    this.#ctx.commitState?.(serializeState(snap));
    this.#durable = snap;
  }

  async #writeGroup(path: string, pieces: Buffer[], work: FileSinkState, base: Map<string, number>, now: number): Promise<void> {
    const file = work.files[path];
    if (file === undefined) throw new Error(`bug: ${path} is not in the state`);
    const maxBytes = this.#cfg.rotate?.max_bytes;
    const maxAge = this.#cfg.rotate?.max_age;
    if (maxAge !== undefined && file.off > 0 && now - file.created >= maxAge) await this.#rotate(path, work, base, now);
    if (maxBytes === undefined) {
      await this.#append(path, pieces, work);
      return;
    }
    let chunk: Buffer[] = [];
    let chunkBytes = 0;
    for (const piece of pieces) {
      if (work.files[path]!.off + chunkBytes + piece.length <= maxBytes) {
        chunk.push(piece);
        chunkBytes += piece.length;
        continue;
      }
      // The piece crosses the size limit: line by line, rotating between two lines (a line
      // longer than the limit still goes whole into an empty file).
      for (let at = 0; at < piece.length; ) {
        const end = piece.indexOf(NEWLINE, at) + 1 || piece.length;
        const line = piece.subarray(at, end);
        at = end;
        const off = work.files[path]!.off;
        if (off + chunkBytes > 0 && off + chunkBytes + line.length > maxBytes) {
          if (chunkBytes > 0) await this.#append(path, chunk, work);
          chunk = [];
          chunkBytes = 0;
          await this.#rotate(path, work, base, now);
        }
        chunk.push(line);
        chunkBytes += line.length;
      }
    }
    if (chunkBytes > 0) await this.#append(path, chunk, work);
  }

  /** Appends the pieces in order, with gathered writes (no copy into one buffer). */
  async #append(path: string, pieces: readonly Buffer[], work: FileSinkState): Promise<void> {
    const file = work.files[path]!;
    const { fh } = await this.#handles.acquire(path);
    if (file.off === 0) file.created = this.#ctx.now();
    this.#touched.add(path);
    this.#lastWrite.set(path, performance.now());
    await writeAll(fh, pieces, (bytes) => {
      file.off += bytes;
    });
    if (this.#cfg.fsync === 'always') await fh.sync();
  }

  /**
   * Renames the active file away and starts it again. The rotation is committed before
   * the rename, so a crash in between is completed at the next open; the bytes this
   * batch already put in the rotated file stay uncommitted until the batch is.
   */
  async #rotate(path: string, work: FileSinkState, base: Map<string, number>, now: number): Promise<void> {
    const file = work.files[path]!;
    const fh = this.#handles.peek(path);
    if (fh !== undefined && this.#sync && this.#touched.has(path)) await fh.sync();
    await this.#handles.close(path);
    this.#touched.delete(path);
    const taken = (c: string): boolean =>
      existsSync(c) || existsSync(gzName(c)) || existsSync(gzTempName(c)) || work.files[c] !== undefined || work.rotated.some((r) => r.path === c);
    const to = rotatedName(path, now, taken);
    const rot = { path: to, from: path, off: file.off, renamed: false };
    work.rotated.push(rot);
    base.set(to, base.get(path) ?? 0);
    work.files[path] = { off: 0, created: now };
    base.set(path, 0);
    this.#commit(work, base);
    await rename(path, to);
    if (this.#sync) await fsyncDir(dirname(to));
    rot.renamed = true;
    this.#ctx.logger.info({ sink: this.#ctx.name, from: path, to }, 'Rotated an output file.');
  }

  // ---- lifecycle ------------------------------------------------------------------

  async healthcheck(): Promise<{ ok: boolean; detail?: string }> {
    let dir = dirname(resolve(this.#template.staticPrefix + 'x'));
    for (;;) {
      try {
        if (!(await stat(dir)).isDirectory()) return { ok: false, detail: `${dir} is not a directory` };
        await access(dir, constants.W_OK);
        return { ok: true, detail: `${dir} is writable` };
      } catch (err) {
        if (errCode(err) !== 'ENOENT' || dirname(dir) === dir) {
          const fix = fileErrorFix(err, this.#setting);
          return { ok: false, detail: `${dir}: ${describeError(err)}${fix ? `; ${fix}` : ''}` };
        }
        dir = dirname(dir);
      }
    }
  }

  flush(): Promise<void> {
    return this.#exclusive(async () => {
      for (const path of this.#handles.paths()) await this.#handles.peek(path)?.sync();
    });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#timer !== undefined) clearInterval(this.#timer);
      await this.#chain;
      if (this.#sync) {
        for (const path of this.#handles.paths()) {
          await this.#handles
            .peek(path)
            ?.sync()
            .catch((err: unknown) => this.#logIoError(err, 'Could not fsync an output file on close.'));
        }
      }
      await this.#handles.closeAll();
      while (this.#compressing !== undefined) await this.#compressing;
    })();
    return this.#closing;
  }
}
