//! One HTTP request and its response through an endpoint's dispatcher (dispatcher.ts), for
//! the service client and the network sinks alike: the body is read up to a limit chosen
//! from the status and the connection dropped past it, a request that a closing keep-alive
//! connection cut off is sent again at once, and a sink's answer becomes a delivery outcome.
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { parseRetryAfter } from './retry-after.js';
import type { SendOutcome } from '../sinks/contract.js';

/** A POST to send. */
export interface HttpRequest {
  origin: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string | Buffer;
  signal?: AbortSignal | undefined;
  /** Most body bytes read for a status; the connection is dropped past them. */
  limitFor(status: number): number;
}

/** A response that started: its status, headers and body as read. */
export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body: whole, or what was read before the limit (`tooLarge`) or an error (`bodyError`). */
  body: Buffer;
  /** The body was over `limitFor(status)`, by its Content-Length or by what arrived. */
  tooLarge: boolean;
  /** The body's length as announced by Content-Length, if it was. */
  declaredBytes: number | undefined;
  /** What ended the body early (timeout, reset, abort), if anything. */
  bodyError: unknown;
}

/** Codes of a connection closed before any byte of the response. */
const CLOSED_BEFORE_ANSWER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * Sends `req` and reads the response; rejects when no response started (refused, reset,
 * TLS, proxy, headers timeout, abort).
 *
 * A server may close an idle keep-alive connection without saying so (no `Connection:
 * close`) just as a request goes out on it; the request then fails before any response
 * byte. It is sent again at once, once, with no backoff. Only idempotent requests come
 * here: callers say why theirs are.
 */
export async function exchange(dispatcher: Dispatcher, req: HttpRequest): Promise<HttpAnswer> {
  try {
    return await exchangeOnce(dispatcher, req);
  } catch (err) {
    if (req.signal?.aborted || !CLOSED_BEFORE_ANSWER.has((err as { code?: string }).code ?? '')) throw err;
    return exchangeOnce(dispatcher, req);
  }
}

/**
 * One request through undici's `dispatch`, its body gathered as it arrives (`request`
 * wraps the same in a stream and a promise per chunk, which at thousands of polls a second
 * costs more than the request itself: docs/decisions/0055). An abort rejects at once, also
 * for a request still queued for a busy connection, which undici would abort only once it
 * got one.
 */
function exchangeOnce(dispatcher: Dispatcher, req: HttpRequest): Promise<HttpAnswer> {
  const { signal } = req;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<HttpAnswer>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let answer: HttpAnswer | undefined;
    let limit = 0;
    let total = 0;
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const fail = (err: unknown): void => {
      if (settle()) reject(err);
    };
    const answered = (): void => {
      if (!settle()) return;
      answer!.body = Buffer.concat(chunks, total);
      resolve(answer!);
    };
    /** Past the limit: the answer as read so far, and the connection dropped. */
    const tooLarge = (c: Dispatcher.DispatchController): void => {
      answer!.tooLarge = true;
      answered();
      c.abort(new Error('the response is larger than the limit'));
    };
    // Before the response, an abort rejects; during the body, it ends the body (bodyError).
    const onAbort = (): void => {
      if (answer === undefined) fail(signal!.reason);
      controller?.abort(signal!.reason);
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (settled) c.abort(signal?.reason ?? new Error('aborted'));
      },
      onResponseStart(c, status, headers) {
        if (settled) return;
        const length = headers['content-length'];
        const declaredBytes = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : undefined;
        limit = req.limitFor(status);
        answer = { status, headers, body: EMPTY, tooLarge: false, declaredBytes, bodyError: undefined };
        if (declaredBytes !== undefined && declaredBytes > limit) tooLarge(c);
      },
      onResponseData(c, chunk) {
        if (settled) return;
        if (total + chunk.length > limit) {
          chunks.push(chunk.subarray(0, limit - total));
          total = limit;
          tooLarge(c);
          return;
        }
        chunks.push(chunk);
        total += chunk.length;
      },
      onResponseEnd() {
        answered();
      },
      onResponseError(_c, err) {
        if (answer === undefined) return fail(err);
        if (!settled) answer.bodyError = err;
        answered();
      },
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      dispatcher.dispatch({ origin: req.origin, path: req.path, method: 'POST', headers: req.headers, body: req.body }, handler);
    } catch (err) {
      fail(err);
    }
  });
}

const EMPTY = Buffer.alloc(0);

/**
 * A network sink's outcome for an answer: 2xx acknowledges; 408, 429 and 5xx are retried
 * after the `Retry-After` the receiver asked for (at most `maxDelayMs`), and so is 407, the
 * proxy's refusal, which says nothing of the batch; any other status is rejected, as sending
 * the same batch again would get the same answer. `error` quotes it.
 */
export function answerOutcome(status: number, retryAfter: string | string[] | undefined, error: string, nowMs: number, maxDelayMs: number): SendOutcome {
  if (status >= 200 && status < 300) return { status: 'ok' };
  if (status !== 407 && status !== 408 && status !== 429 && status < 500) return { status: 'reject', error };
  const afterMs = parseRetryAfter(retryAfter, nowMs);
  return afterMs === undefined ? { status: 'retry', error } : { status: 'retry', afterMs: Math.min(afterMs, maxDelayMs), error };
}
