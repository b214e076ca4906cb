//! Buffers for response bodies, used again once a page is committed.
//!
//! A page's body (about a quarter of a megabyte per 1,000 entries) lives from its arrival to
//! its commit. V8 counts every new buffer as external memory and starts a full collection
//! for each 64 MB of it, whether or not anything survived; a body collected into a fresh
//! buffer per page was a third of that allocation. The poller gives a page's buffer back
//! once the page is committed (or dropped), and the next response is copied into it.
//!
//! The pool keeps at most 16 buffers and 8 MiB (about 30 pages of 1,000 entries).
//!
//! A buffer is handed out to one response at a time. `give` takes back only a buffer that
//! is out, once: a second `give` of the same buffer, or of one the pool never handed out,
//! does nothing, so two pages can never share a buffer. A buffer that is never given back
//! is simply collected.

/** Limits of a {@link BodyPool}; the defaults are the daemon's. */
export interface BodyPoolOptions {
  /** Buffers kept for reuse. Default 16 (two pages in flight for each of eight concurrent requests). */
  maxBuffers?: number;
  /** Buffers larger than this are not kept. Default 4 MiB. */
  maxBufferBytes?: number;
  /** Bytes kept in all; beyond them a buffer given back is left to the GC. Default 8 MiB. */
  maxTotalBytes?: number;
  /** Smallest buffer handed out. Default 64 KiB. */
  minBufferBytes?: number;
}

/** A small free list of body buffers. */
export class BodyPool {
  readonly #free: Buffer[] = [];
  /** Buffers handed out and not yet given back (weakly: a page dropped without `give` is collected). */
  readonly #out = new WeakSet<ArrayBufferLike>();
  readonly #maxBuffers: number;
  readonly #maxBufferBytes: number;
  readonly #minBufferBytes: number;
  readonly #maxTotalBytes: number;
  #totalBytes = 0;
  /** Buffers handed out that came from the free list (for tests and benchmarks). */
  reused = 0;
  /** Length of the last view given back: the size to ask for when a response does not declare its length. */
  lastBytes = 0;

  constructor(options: BodyPoolOptions = {}) {
    this.#maxBuffers = options.maxBuffers ?? 16;
    this.#maxBufferBytes = options.maxBufferBytes ?? 4 * 1024 * 1024;
    this.#minBufferBytes = options.minBufferBytes ?? 64 * 1024;
    this.#maxTotalBytes = options.maxTotalBytes ?? 8 * 1024 * 1024;
  }

  /** Buffers kept for reuse now. */
  get size(): number {
    return this.#free.length;
  }

  /** Bytes of the buffers kept for reuse now. */
  get bytes(): number {
    return this.#totalBytes;
  }

  /** A buffer of at least `bytes` bytes (its contents are arbitrary), owned by the caller until {@link give}. */
  take(bytes: number): Buffer {
    const free = this.#free;
    // The smallest buffer that fits: large buffers stay for large pages.
    let best = -1;
    for (let i = 0; i < free.length; i++) {
      const len = free[i]!.length;
      if (len >= bytes && (best < 0 || len < free[best]!.length)) best = i;
    }
    let buf: Buffer;
    if (best >= 0) {
      buf = free[best]!;
      free[best] = free[free.length - 1]!;
      free.pop();
      this.#totalBytes -= buf.length;
      this.reused++;
    } else {
      // Its own ArrayBuffer (never a slice of Node's shared pool), so that it can be told apart when given back.
      buf = Buffer.allocUnsafeSlow(Math.max(bytes, this.#minBufferBytes));
    }
    this.#out.add(buf.buffer);
    return buf;
  }

  /**
   * Takes back the buffer under `view` (the buffer {@link take} returned, or any view of
   * it). The caller, and everything it passed the buffer to, must not read it afterwards.
   */
  give(view: Uint8Array): void {
    const ab = view.buffer;
    if (!this.#out.has(ab)) return;
    this.#out.delete(ab);
    this.lastBytes = view.length;
    if (ab.byteLength > this.#maxBufferBytes) return;
    const free = this.#free;
    if (free.length >= this.#maxBuffers) {
      // Keep the larger buffers: a page that needs one would otherwise allocate it again.
      let smallest = 0;
      for (let i = 1; i < free.length; i++) if (free[i]!.length < free[smallest]!.length) smallest = i;
      if (free[smallest]!.length >= ab.byteLength || this.#totalBytes - free[smallest]!.length + ab.byteLength > this.#maxTotalBytes) return;
      this.#totalBytes += ab.byteLength - free[smallest]!.length;
      free[smallest] = Buffer.from(ab);
      return;
    }
    if (this.#totalBytes + ab.byteLength > this.#maxTotalBytes) return;
    this.#totalBytes += ab.byteLength;
    free.push(Buffer.from(ab));
  }
}
