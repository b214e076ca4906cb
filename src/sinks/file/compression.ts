//! Background gzip of rotated files, one at a time. A rotated file is handed over once it
//! is final (its last bytes committed); once compressed it leaves the state at the next
//! commit. A file that failed waits a minute before it is tried again.
import { compressFile } from './rotation.js';
import type { FileSinkState } from './state.js';

const COMPRESS_RETRY_MS = 60_000;

/** Options of {@link RotatedCompression}. */
export interface RotatedCompressionOptions {
  /** Whether rotated files are compressed at all (`compress: gzip`). */
  enabled: boolean;
  fileMode: number;
  sync: boolean;
  onError(err: unknown, msg: string): void;
}

/** The compression queue of one file sink. */
export class RotatedCompression {
  readonly #o: RotatedCompressionOptions;
  /** Paths handed over whose compression has not ended. */
  #pending = new Set<string>();
  #compressed = new Set<string>();
  #failedAt = new Map<string, number>();
  /** Settles once every compression handed over so far has ended. */
  #tail: Promise<void> = Promise.resolve();

  constructor(o: RotatedCompressionOptions) {
    this.#o = o;
  }

  /** Whether `path` was compressed since the state last let go of its compressed files. */
  isCompressed(path: string): boolean {
    return this.#compressed.has(path);
  }

  /**
   * Rotated files in `state` are final: their last bytes are committed and nothing is
   * appended to them any more. Forget them, or hand them to compression. Mutates `state`.
   */
  finalize(state: FileSinkState): void {
    state.rotated = state.rotated.filter((r) => !this.#compressed.has(r.path));
    this.#compressed.clear();
    if (!this.#o.enabled) {
      state.rotated = [];
      return;
    }
    const now = performance.now();
    for (const { path } of state.rotated) {
      if (this.#pending.has(path) || now - (this.#failedAt.get(path) ?? -Infinity) < COMPRESS_RETRY_MS) continue;
      this.#pending.add(path);
      this.#tail = this.#tail.then(() => this.#compress(path));
    }
  }

  /** Resolves once no compression runs. */
  idle(): Promise<void> {
    return this.#tail;
  }

  async #compress(path: string): Promise<void> {
    try {
      await compressFile(path, { fileMode: this.#o.fileMode, sync: this.#o.sync });
      this.#compressed.add(path);
      this.#failedAt.delete(path);
    } catch (err) {
      this.#failedAt.set(path, performance.now());
      this.#o.onError(err, 'Could not compress a rotated file; will try again.');
    } finally {
      this.#pending.delete(path);
    }
  }
}
