//! The file sink itself: each batch's lines appended to the files its path template names,
//! rotated by size or age, and the byte offset of every file it wrote returned as the
//! batch's state, which the delivery loop commits with the cursor in one transaction.
//! After any failed write the files are cut back to the committed offsets first.
import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import PQueue from 'p-queue';
import type { Sink, SinkBatch, SinkContext, SendOutcome } from '../contract.js';
import { RotatedCompression } from './compression.js';
import { groupByPath } from './grouping.js';
import { FileHandles, fsyncDir } from './handles.js';
import { checkWritableDir } from './healthcheck.js';
import { describeWithFix, IoErrorLog, retryDelayMs } from './io-errors.js';
import { adoptFile, matchDisk } from './reconcile.js';
import { gzName, gzTempName, rotatedName } from './rotation.js';
import { parseState, type FileSinkState } from './state.js';
import { compileTemplate, type CompiledTemplate } from './template.js';
import type { FileSinkConfig } from './config.js';

const NEWLINE = 0x0a;

/** What the file sink is built from: the fields of its config block that are its own. */
export type FileSinkOptions = Pick<FileSinkConfig, 'path' | 'fsync' | 'rotate' | 'compress' | 'file_mode' | 'dir_mode'>;

/** Internal limits, for tests and tuning; not part of the config. */
export interface FileSinkTuning {
  /** Most descriptors kept open at once. Default 256: more active models than this reopen (and sync) a file per batch. */
  maxOpenFiles?: number;
  /** A file not written for this long is closed and forgotten by the state. Default 5 min. */
  idleCloseMs?: number;
}

/** A file sink; built and opened by `createFileSink`. */
export class FileSink implements Sink {
  /** Replays are made harmless by truncating to the committed offset, not by batch identity. */
  readonly stableBatchIds = false;
  readonly #cfg: FileSinkOptions;
  readonly #ctx: SinkContext;
  readonly #template: CompiledTemplate;
  readonly #handles: FileHandles;
  readonly #compression: RotatedCompression;
  readonly #errors: IoErrorLog;
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
  /** Runs batches, flushes and the forgetting of idle files one at a time. */
  readonly #queue = new PQueue({ concurrency: 1 });
  #closing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(cfg: FileSinkOptions, ctx: SinkContext, tuning: FileSinkTuning) {
    this.#cfg = cfg;
    this.#ctx = ctx;
    // Resolved once: placeholders render to single segments that can never be `.` or `..`.
    this.#template = compileTemplate(resolve(cfg.path));
    this.#sync = cfg.fsync !== 'never';
    this.#idleCloseMs = tuning.idleCloseMs ?? 300_000;
    this.#durable = parseState(ctx.state);
    if (!ctx.state) this.#durable.since = ctx.now();
    this.#errors = new IoErrorLog(ctx.logger, ctx.name);
    this.#compression = new RotatedCompression({
      enabled: cfg.compress === 'gzip',
      fileMode: cfg.file_mode,
      sync: this.#sync,
      onError: (err, msg) => this.#errors.log(err, msg),
    });
    this.#handles = new FileHandles({
      max: Math.max(1, tuning.maxOpenFiles ?? 256),
      fileMode: cfg.file_mode,
      dirMode: cfg.dir_mode,
      syncDirs: this.#sync,
      beforeEvict: async (path, fh) => {
        if (this.#sync && this.#touched.has(path)) await fh.sync();
      },
    });
  }

  /** Reconciles the files with the committed state and starts forgetting idle files. I/O errors are logged, not thrown. */
  async open(): Promise<void> {
    if (this.#ctx.commitState === undefined) {
      this.#ctx.logger.warn(
        { sink: this.#ctx.name },
        'The delivery loop cannot commit file sink state on its own; a crash right after starting a new file may duplicate lines in it.',
      );
    }
    try {
      await this.#reconcile();
      this.#compression.finalize(this.#durable);
    } catch (err) {
      this.#errors.log(err, 'Could not reconcile the output files with the committed state; will retry before the next batch.');
    }
    this.#timer = setInterval(() => {
      void this.#queue.add(() => this.#forgetIdle());
    }, Math.max(1_000, Math.floor(this.#idleCloseMs / 2)));
    this.#timer.unref();
  }

  /**
   * Makes the files on disk match `#durable`. What cannot be matched is adopted as found,
   * and that adoption committed at once, so a crash before the next batch's commit does
   * not measure the next batch's lines against offsets that no longer hold.
   */
  async #reconcile(): Promise<void> {
    const before = JSON.stringify(this.#durable);
    await this.#compression.idle();
    await this.#handles.closeAll();
    await matchDisk(this.#durable, this.#ctx, this.#sync);
    const after = JSON.stringify(this.#durable);
    if (after !== before) this.#ctx.commitState?.(after);
    this.#dirty = false;
  }

  /**
   * Closes the files not written for `idleCloseMs` and drops them from the state (all their
   * bytes are committed), so a template that names a new file every hour does not keep every
   * hour's file in it; a file known only from the committed state gets one idle period from
   * now. Not while the state is in doubt or the sink is closing.
   */
  async #forgetIdle(): Promise<void> {
    if (this.#dirty || this.#closing !== undefined) return;
    const now = performance.now();
    for (const path of Object.keys(this.#durable.files)) {
      const last = this.#lastWrite.get(path);
      if (last === undefined) this.#lastWrite.set(path, now);
      if (last === undefined || now - last < this.#idleCloseMs) continue;
      // Closing only releases the descriptor: what was written is already synced per policy, and a failed close changes nothing on disk.
      await this.#handles.close(path).catch(() => undefined);
      delete this.#durable.files[path];
      this.#lastWrite.delete(path);
    }
  }

  // ---- delivery -------------------------------------------------------------------

  send(batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> {
    if (signal.aborted) return Promise.resolve({ status: 'retry', error: 'aborted' });
    if (this.#ctx.checkOnly) return Promise.resolve({ status: 'retry', error: 'this file sink was built for a check and writes nothing' });
    return this.#queue.add(() => this.#send(batch));
  }

  async #send(batch: SinkBatch): Promise<SendOutcome> {
    if (this.#closing !== undefined) return { status: 'retry', error: 'the file sink is closed' };
    try {
      if (this.#dirty) await this.#reconcile();
      this.#compression.finalize(this.#durable);
      await this.#forgetIdle();
      const work = structuredClone(this.#durable);
      /** Committed offset of every path the batch may touch. */
      const base = new Map<string, number>();
      for (const [p, f] of Object.entries(work.files)) base.set(p, f.off);
      for (const r of work.rotated) base.set(r.path, r.off);

      const groups = groupByPath(batch, work.seq, this.#template);
      const now = this.#ctx.now();

      const unknown = [...groups.keys()].filter((p) => work.files[p] === undefined);
      if (unknown.length > 0) {
        for (const path of unknown) {
          base.set(path, await adoptFile(path, await this.#handles.acquire(path), work, now, this.#ctx));
        }
        this.#commit(work, base);
      }

      this.#touched.clear();
      for (const [path, lines] of groups) await this.#writeGroup(path, lines, work, base, now);
      if (this.#cfg.fsync === 'batch') await this.#handles.syncAll(this.#touched);
      this.#touched.clear();

      work.seq = Math.max(work.seq, batch.lastSeq);
      work.rotated = work.rotated.filter((r) => !this.#compression.isCompressed(r.path));
      this.#durable = work;
      return { status: 'ok', state: JSON.stringify(work) };
    } catch (err) {
      this.#touched.clear();
      this.#dirty = true;
      this.#errors.log(err, 'Could not write to the output files; the batch will be retried.');
      try {
        await this.#reconcile();
      } catch (again) {
        this.#errors.log(again, 'Could not cut the output files back to the committed state; will retry.');
      }
      return { status: 'retry', afterMs: retryDelayMs(err), error: describeWithFix(err, this.#errors.setting) };
    }
  }

  /** Stores structural changes (new files, rotations) with every offset at its committed value. */
  #commit(work: FileSinkState, base: Map<string, number>): void {
    const snap = structuredClone(work);
    for (const [p, f] of Object.entries(snap.files)) f.off = base.get(p) ?? f.off;
    for (const r of snap.rotated) r.off = base.get(r.path) ?? r.off;
    snap.rotated = snap.rotated.filter((r) => !this.#compression.isCompressed(r.path));
    this.#ctx.commitState?.(JSON.stringify(snap));
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

  /**
   * Appends the pieces in order. A write that fails part way leaves `work` behind the file;
   * the failure makes the sink cut the file back to its committed offset before anything else.
   */
  async #append(path: string, pieces: readonly Buffer[], work: FileSinkState): Promise<void> {
    const file = work.files[path]!;
    const fh = await this.#handles.acquire(path);
    if (file.off === 0) file.created = this.#ctx.now();
    this.#touched.add(path);
    this.#lastWrite.set(path, performance.now());
    const bytes = Buffer.concat(pieces);
    // appendFile goes on after a short write until every byte is in
    await fh.appendFile(bytes);
    file.off += bytes.length;
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

  healthcheck(): Promise<{ ok: boolean; detail?: string }> {
    return checkWritableDir(this.#template.staticPrefix, this.#errors.setting);
  }

  flush(): Promise<void> {
    return this.#queue.add(() => this.#handles.syncAll());
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#timer !== undefined) clearInterval(this.#timer);
      await this.#queue.onIdle();
      if (this.#sync) await this.#handles.syncAll().catch((err: unknown) => this.#errors.log(err, 'Could not fsync an output file on close.'));
      await this.#handles.closeAll();
      await this.#compression.idle();
    })();
    return this.#closing;
  }
}
