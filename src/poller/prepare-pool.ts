//! Preparing large pages on a second thread. Scanning a body, computing its entries' times
//! and hashes and rendering their journal lines is about a third of the main thread's work
//! while pages stream in; a worker thread does the preparing and rendering in parallel with
//! the commits, the network and the sinks. Small pages (an idle or slow model's) are
//! prepared inline, and the worker starts only when a large page comes and stops after a
//! quiet spell, so an idle daemon carries no second V8 isolate. If the worker cannot start
//! or fails, pages are prepared inline: the thread changes where the work runs, never what
//! it produces.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { ScannedLogs } from '../api/logs-scan.js';
import { RenderedPage } from '../journal/prepared.js';
import { prepareScanned, type Prepared } from './prepare.js';

/** A page to prepare, as posted to the worker (copies: the caller keeps its scan). */
export interface PrepareRequest {
  id: number;
  modelId: string;
  windowFromMs: number;
  body: Uint8Array;
  spans: Uint32Array;
  kinds: Uint8Array;
  count: number;
}

/** The worker's answer: the prepared arrays, transferred, or why it failed. */
export type PrepareReply =
  | { id: number; timesNs: BigInt64Array; hashes: Float64Array; lines: Uint8Array; ends: Uint32Array; badTimes: number; badExample: string | undefined }
  | { id: number; error: string };

/** Options of {@link PreparePool}. */
export interface PreparePoolOptions {
  /** The worker script; by default prepare-worker.js beside this module (absent when running from sources: pages are then prepared inline). */
  workerUrl?: URL;
  /** Pages with fewer entries are prepared inline. Default 200. */
  minEntries?: number;
  /** The worker stops after this long without a page. Default 30 s. */
  idleMs?: number;
  /** After the worker failed, pages are prepared inline for this long. Default 60 s. */
  retryAfterMs?: number;
  logger?: Logger;
}

interface Pending {
  resolve(p: Prepared): void;
  scan: ScannedLogs;
  windowFromMs: number;
  modelId: string;
}

const DEFAULT_WORKER = new URL('./prepare-worker.js', import.meta.url);

/** Prepares scanned pages, large ones on a worker thread. */
export class PreparePool {
  readonly #url: URL | undefined;
  readonly #minEntries: number;
  readonly #idleMs: number;
  readonly #retryAfterMs: number;
  readonly #logger: Logger | undefined;
  #worker: Worker | undefined;
  #pending = new Map<number, Pending>();
  #nextId = 0;
  #lastUsedMs = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  #disabledUntilMs = 0;
  #closed = false;
  /** Pages prepared on the worker and inline, for tests and status. */
  readonly counts = { worker: 0, inline: 0, fallbacks: 0 };

  constructor(options: PreparePoolOptions = {}) {
    const url = options.workerUrl ?? DEFAULT_WORKER;
    this.#url = url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
    this.#minEntries = options.minEntries ?? 200;
    this.#idleMs = options.idleMs ?? 30_000;
    this.#retryAfterMs = options.retryAfterMs ?? 60_000;
    this.#logger = options.logger;
  }

  /** Whether a worker thread is running now. */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** Prepares the entries of a scanned body (see prepareScanned); the result is the same wherever it ran. */
  prepare(scan: ScannedLogs, windowFromMs: number, modelId: string): Promise<Prepared> {
    const worker = scan.count >= this.#minEntries ? this.#ensureWorker() : undefined;
    if (!worker) {
      this.counts.inline++;
      return Promise.resolve(prepareScanned(scan, windowFromMs));
    }
    const id = ++this.#nextId;
    this.#lastUsedMs = performance.now();
    return new Promise<Prepared>((resolve) => {
      this.#pending.set(id, { resolve, scan, windowFromMs, modelId });
      const request: PrepareRequest = {
        id,
        modelId,
        windowFromMs,
        body: copy(scan.body),
        spans: scan.spans.slice(),
        kinds: scan.kinds.slice(),
        count: scan.count,
      };
      // Fresh arrays of their own: moved to the worker, not copied again.
      worker.postMessage(request, [request.body.buffer, request.spans.buffer, request.kinds.buffer] as ArrayBuffer[]);
    });
  }

  /** Stops the worker; pages still with it are prepared inline. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#stopWorker();
  }

  #ensureWorker(): Worker | undefined {
    if (this.#worker) return this.#worker;
    if (this.#closed || !this.#url || performance.now() < this.#disabledUntilMs) return undefined;
    let worker: Worker;
    try {
      worker = new Worker(this.#url);
    } catch (err) {
      this.#fail(`cannot start: ${String(err)}`);
      return undefined;
    }
    worker.unref();
    worker.on('message', (reply: PrepareReply) => this.#onReply(reply));
    worker.on('error', (err) => {
      if (this.#worker === worker) this.#fail(String(err?.stack ?? err));
    });
    worker.on('exit', (code) => {
      if (this.#worker === worker) this.#fail(`exited with code ${code}`);
    });
    this.#worker = worker;
    this.#idleTimer = setInterval(() => {
      if (this.#pending.size === 0 && performance.now() - this.#lastUsedMs >= this.#idleMs) void this.#stopWorker();
    }, Math.min(10_000, this.#idleMs));
    this.#idleTimer.unref();
    this.#logger?.debug('page preparation: worker thread started');
    return worker;
  }

  #onReply(reply: PrepareReply): void {
    const p = this.#pending.get(reply.id);
    if (!p) return;
    this.#pending.delete(reply.id);
    if ('error' in reply) {
      this.#logger?.warn({ error: reply.error.slice(0, 500) }, 'page preparation: the worker thread failed a page; prepared inline');
      this.counts.fallbacks++;
      p.resolve(prepareScanned(p.scan, p.windowFromMs));
      return;
    }
    this.counts.worker++;
    const lines = Buffer.from(reply.lines.buffer, reply.lines.byteOffset, reply.lines.byteLength);
    p.resolve({ page: new RenderedPage(p.modelId, reply.timesNs, reply.hashes, lines, reply.ends), badTimes: reply.badTimes, badExample: reply.badExample });
  }

  /** The worker failed: what it held is prepared inline, and it is not used for a while. */
  #fail(why: string): void {
    this.#logger?.warn({ error: why.slice(0, 500) }, 'page preparation: worker thread failed; preparing pages inline for now');
    this.#disabledUntilMs = performance.now() + this.#retryAfterMs;
    void this.#stopWorker();
  }

  async #stopWorker(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (this.#idleTimer) clearInterval(this.#idleTimer);
    this.#idleTimer = undefined;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      this.counts.fallbacks++;
      p.resolve(prepareScanned(p.scan, p.windowFromMs));
    }
    if (worker) {
      await worker.terminate();
      this.#logger?.debug('page preparation: worker thread stopped');
    }
  }
}

function copy(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.byteLength);
  out.set(b);
  return out;
}
