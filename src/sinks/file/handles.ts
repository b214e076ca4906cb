//! A bounded set of open append-only file descriptors, least recently used closed first,
//! so a template that fans out over many models or hours cannot exhaust descriptors.
import { constants } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Fsyncs a directory so a file created or renamed in it survives power loss. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Options of {@link FileHandles}. */
export interface FileHandlesOptions {
  /** Most descriptors kept open. */
  max: number;
  fileMode: number;
  dirMode: number;
  /** Fsync the directories of created files and directories. */
  syncDirs: boolean;
  /** Called before a descriptor is closed to make room (e.g. to fsync it). */
  beforeEvict(path: string, fh: FileHandle): Promise<void>;
}

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

/** Open descriptors by path, in least-recently-used order. */
export class FileHandles {
  readonly #opts: FileHandlesOptions;
  readonly #open = new Map<string, FileHandle>();

  constructor(opts: FileHandlesOptions) {
    this.#opts = opts;
  }

  /** The open descriptor of `path`, if any, without opening one. */
  peek(path: string): FileHandle | undefined {
    return this.#open.get(path);
  }

  /**
   * Fsyncs the open descriptors of `paths` (by default, all) at once: the pool's threads sync them side by
   * side, and their ends wake the event loop together rather than one after another (a
   * batch of a hundred active models touches a file for each). Every sync has ended when
   * this settles; the first failure is then thrown, so no sync still runs on a descriptor
   * that the caller goes on to close.
   */
  async syncAll(paths: Iterable<string> = this.#open.keys()): Promise<void> {
    const syncs: Promise<void>[] = [];
    for (const path of paths) {
      const fh = this.peek(path);
      if (fh !== undefined) syncs.push(fh.sync());
    }
    const failed = (await Promise.allSettled(syncs)).find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  /**
   * Returns a descriptor appending to `path`, opening (and if need be creating the file
   * and its directories) when none is open.
   */
  async acquire(path: string): Promise<FileHandle> {
    const hit = this.#open.get(path);
    if (hit !== undefined) {
      // Moved to the end: the map's order is the order of use.
      this.#open.delete(path);
      this.#open.set(path, hit);
      return hit;
    }
    const fh = await this.#openFile(path);
    this.#open.set(path, fh);
    while (this.#open.size > this.#opts.max) {
      const [oldest, handle] = this.#open.entries().next().value as [string, FileHandle];
      this.#open.delete(oldest);
      try {
        await this.#opts.beforeEvict(oldest, handle);
      } finally {
        await handle.close();
      }
    }
    return fh;
  }

  async #openFile(path: string): Promise<FileHandle> {
    for (let attempt = 0; ; attempt++) {
      try {
        const fh = await open(path, APPEND | constants.O_EXCL, this.#opts.fileMode);
        if (this.#opts.syncDirs) await fsyncDir(dirname(path));
        return fh;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') return await open(path, APPEND, this.#opts.fileMode);
        if (code !== 'ENOENT' || attempt > 0) throw err;
        await this.#mkdirs(dirname(path));
      }
    }
  }

  async #mkdirs(dir: string): Promise<void> {
    const first = await mkdir(dir, { recursive: true, mode: this.#opts.dirMode });
    if (first === undefined || !this.#opts.syncDirs) return;
    // Every directory created needs its entry made durable in its parent.
    for (let d = dir; ; d = dirname(d)) {
      await fsyncDir(dirname(d));
      if (d === first || dirname(d) === d) break;
    }
  }

  /** Closes the descriptor of `path`, if open. */
  async close(path: string): Promise<void> {
    const fh = this.#open.get(path);
    if (fh === undefined) return;
    this.#open.delete(path);
    await fh.close();
  }

  /** Closes every descriptor; errors on close are ignored (the data was written or will be rolled back). */
  async closeAll(): Promise<void> {
    const all = [...this.#open.values()];
    this.#open.clear();
    // A failed close loses nothing, and one must not keep the others open.
    await Promise.all(all.map((fh) => fh.close().catch(() => undefined)));
  }
}
