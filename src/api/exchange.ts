//! One HTTP request and its whole response, through the connection pool's callbacks: no
//! body stream, no async iteration, one buffer per chunk. The body is collected up to a
//! limit chosen from the status, and the connection is dropped as soon as it is exceeded.
import type { BodyPool } from './body-pool.js';
import type { AbortWatch, AbortWatcher } from './call-abort.js';
import type { ExchangeControl, Http1Pool, ResponseHandler } from './http1/pool.js';

/** A response that started: status and headers, and the body or why it is missing. */
export interface Exchanged {
  status: number;
  /** Field names in lower case. */
  headers: Readonly<Record<string, string>>;
  /** The whole body; undefined when it was cut short or over the limit. */
  body: Buffer | undefined;
  /** The body was over `limitFor(status)`: the connection was dropped after that many bytes. */
  tooLarge: boolean;
  /** The body's length as announced by Content-Length, if it was. */
  declaredBytes: number | undefined;
  /** What ended the body early (timeout, reset, abort), if anything. */
  bodyError: unknown;
}

/** The request to send. */
export interface ExchangeRequest {
  path: string;
  method: string;
  headers: Readonly<Record<string, string>>;
  body: string;
  /** The abort of the call this request belongs to. */
  abort: AbortWatch;
  /** Most body bytes accepted for a status. */
  limitFor(status: number): number;
  /**
   * Where a successful (2xx) response's body is collected: the body is then a view of a
   * buffer taken from this pool, and whoever ends up holding it gives it back.
   */
  bodies?: BodyPool;
}

class TooLarge extends Error {}

/**
 * Sends a request; resolves once the response is complete or has failed after it started,
 * rejects when no response started (connection refused, reset, TLS failure, headers timeout,
 * or the call aborted before the status line).
 */
export function exchange(pool: Http1Pool, req: ExchangeRequest): Promise<Exchanged> {
  return new Promise<Exchanged>((resolve, reject) => {
    if (req.abort.aborted) {
      reject(req.abort.reason);
      return;
    }
    const handler = new ExchangeHandler(req, resolve, reject);
    pool.dispatch({ path: req.path, method: req.method, headers: req.headers, body: req.body }, handler);
  });
}

/**
 * One exchange's state and the pool's callbacks, in one object: a closure per callback made a
 * dozen objects per request, at a thousand requests a second with 10,000 models. It is also
 * what the call's abort tells (`handleEvent`).
 */
class ExchangeHandler implements ResponseHandler, AbortWatcher {
  private controller: ExchangeControl | undefined;
  private started = false;
  private status = 0;
  private headers: Readonly<Record<string, string>> = {};
  private limit = 0;
  private declaredBytes: number | undefined;
  private total = 0;
  private chunks: Buffer[] = [];
  /** The pooled buffer the body is copied into, when `req.bodies` is used for this response. */
  private pooled: Buffer | undefined;
  private settled = false;

  constructor(
    private readonly req: ExchangeRequest,
    private readonly resolve: (value: Exchanged) => void,
    private readonly reject: (reason: unknown) => void,
  ) {
    req.abort.watch(this);
  }

  /** The call was aborted. */
  handleEvent(): void {
    const { reason: given } = this.req.abort;
    const reason = given instanceof Error ? given : new Error('aborted');
    // Still queued in the pool (e.g. behind a connection being opened): give up at once;
    // onRequestStart aborts the request when its turn comes.
    if (this.controller) this.controller.abort(reason);
    else if (this.settle()) this.reject(reason);
  }

  /** Marks the exchange settled; false if it already was. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.req.abort.unwatch(this);
    this.chunks = [];
    return true;
  }

  private ended(body: Buffer | undefined, tooLarge: boolean, bodyError: unknown): void {
    // Without a body to hand over, the pooled buffer goes straight back (once settled, it is the caller's).
    if (this.pooled && body === undefined && !this.settled) this.req.bodies!.give(this.pooled);
    if (this.settle()) this.resolve({ status: this.status, headers: this.headers, body, tooLarge, declaredBytes: this.declaredBytes, bodyError });
  }

  private overLimit(c: ExchangeControl): void {
    this.ended(undefined, true, undefined);
    c.abort(new TooLarge('response body over the limit'));
  }

  onRequestStart(c: ExchangeControl): void {
    this.controller = c;
    if (this.req.abort.aborted) this.handleEvent();
  }

  // The pool reads past 1xx informational responses: this is the final one.
  onResponseStart(c: ExchangeControl, statusCode: number, responseHeaders: Readonly<Record<string, string>>): void {
    const { req } = this;
    this.started = true;
    this.status = statusCode;
    this.headers = responseHeaders;
    this.limit = req.limitFor(statusCode);
    const declared = Number(responseHeaders['content-length']);
    if (Number.isFinite(declared)) this.declaredBytes = declared;
    if (Number.isFinite(declared) && declared > this.limit) this.overLimit(c);
    // Without a declared length, a body about as long as the last one is the best guess.
    else if (req.bodies && statusCode < 300) this.pooled = req.bodies.take(Number.isFinite(declared) ? declared : Math.min(this.limit, req.bodies.lastBytes));
  }

  onResponseData(c: ExchangeControl, chunk: Buffer): void {
    if (this.settled) return;
    const at = this.total;
    this.total += chunk.length;
    if (this.total > this.limit) this.overLimit(c);
    else if (this.pooled) {
      if (this.total > this.pooled.length) {
        // More than the declared length (or none was declared): move to a larger buffer.
        const bodies = this.req.bodies!;
        const larger = bodies.take(Math.min(this.limit, Math.max(this.total, 2 * this.pooled.length)));
        this.pooled.copy(larger, 0, 0, at);
        bodies.give(this.pooled);
        this.pooled = larger;
      }
      chunk.copy(this.pooled, at);
    } else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.pooled) this.ended(this.pooled.subarray(0, this.total), false, undefined);
    else this.ended(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.total), false, undefined);
  }

  onResponseError(_c: ExchangeControl, err: Error): void {
    if (this.started) this.ended(undefined, false, err);
    else if (this.settle()) this.reject(err);
  }
}
