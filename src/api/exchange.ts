//! One HTTP request and its whole response, through undici's dispatcher API directly: no
//! body stream, no async iteration, one buffer per chunk. The body is collected up to a
//! limit chosen from the status, and the connection is dropped as soon as it is exceeded.
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { BodyPool } from './body-pool.js';

/** A response that started: status and headers, and the body or why it is missing. */
export interface Exchanged {
  status: number;
  headers: IncomingHttpHeaders;
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
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
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
 * or `signal` aborted before the status line).
 */
export function exchange(dispatcher: Dispatcher, req: ExchangeRequest): Promise<Exchanged> {
  return new Promise<Exchanged>((resolve, reject) => {
    const { signal } = req;
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let started = false;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    let limit = 0;
    let declaredBytes: number | undefined;
    let total = 0;
    let chunks: Buffer[] = [];
    /** The pooled buffer the body is copied into, when `req.bodies` is used for this response. */
    let pooled: Buffer | undefined;
    let settled = false;
    const onAbort = (): void => {
      const reason = signal.reason instanceof Error ? signal.reason : new Error('aborted');
      // Still queued in the pool (e.g. behind a connection being opened): give up at once;
      // onRequestStart aborts the request when its turn comes.
      if (controller) controller.abort(reason);
      else settle(() => reject(reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      chunks = [];
      fn();
    };
    const ended = (body: Buffer | undefined, tooLarge: boolean, bodyError: unknown): void => {
      // Without a body to hand over, the pooled buffer goes straight back (once settled, it is the caller's).
      if (pooled && body === undefined && !settled) req.bodies!.give(pooled);
      settle(() => resolve({ status, headers, body, tooLarge, declaredBytes, bodyError }));
    };
    const overLimit = (c: Dispatcher.DispatchController): void => {
      ended(undefined, true, undefined);
      c.abort(new TooLarge('response body over the limit'));
    };
    dispatcher.dispatch(
      { path: req.path, method: req.method, headers: req.headers, body: req.body },
      {
        onRequestStart(c) {
          controller = c;
          if (signal.aborted) onAbort();
        },
        onResponseStart(c, statusCode, responseHeaders) {
          // 1xx informational responses are followed by the real one.
          if (statusCode < 200) return;
          started = true;
          status = statusCode;
          headers = responseHeaders;
          limit = req.limitFor(statusCode);
          const declared = Number(responseHeaders['content-length']);
          if (Number.isFinite(declared)) declaredBytes = declared;
          if (Number.isFinite(declared) && declared > limit) overLimit(c);
          // Without a declared length, a body about as long as the last one is the best guess.
          else if (req.bodies && statusCode < 300) pooled = req.bodies.take(Number.isFinite(declared) ? declared : Math.min(limit, req.bodies.lastBytes));
        },
        onResponseData(c, chunk) {
          if (settled) return;
          const at = total;
          total += chunk.length;
          if (total > limit) overLimit(c);
          else if (pooled) {
            if (total > pooled.length) {
              // More than the declared length (or none was declared): move to a larger buffer.
              const larger = req.bodies!.take(Math.min(limit, Math.max(total, 2 * pooled.length)));
              pooled.copy(larger, 0, 0, at);
              req.bodies!.give(pooled);
              pooled = larger;
            }
            chunk.copy(pooled, at);
          } else chunks.push(chunk);
        },
        onResponseEnd() {
          if (pooled) ended(pooled.subarray(0, total), false, undefined);
          else ended(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total), false, undefined);
        },
        onResponseError(_c, err) {
          if (started) ended(undefined, false, err);
          else settle(() => reject(err));
        },
      },
    );
  });
}
