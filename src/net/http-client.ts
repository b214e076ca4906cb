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
  const options: Dispatcher.RequestOptions = { origin: req.origin, path: req.path, method: 'POST', headers: req.headers, body: req.body, signal: req.signal };
  let res: Dispatcher.ResponseData;
  try {
    res = await requestOrAbort(dispatcher, options, req.signal);
  } catch (err) {
    if (req.signal?.aborted || !CLOSED_BEFORE_ANSWER.has((err as { code?: string }).code ?? '')) throw err;
    res = await requestOrAbort(dispatcher, options, req.signal);
  }
  const limit = req.limitFor(res.statusCode);
  const length = res.headers['content-length'];
  const declaredBytes = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : undefined;
  const answer: HttpAnswer = { status: res.statusCode, headers: res.headers, body: Buffer.alloc(0), tooLarge: false, declaredBytes, bodyError: undefined };
  if (declaredBytes !== undefined && declaredBytes > limit) {
    // undici reports the body's end as an error: no one waits for it here
    res.body.on('error', () => {}).destroy();
    answer.tooLarge = true;
    return answer;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (total + chunk.length > limit) {
        chunks.push(chunk.subarray(0, limit - total));
        total = limit;
        // leaving the loop destroys the body, and so the connection
        answer.tooLarge = true;
        break;
      }
      chunks.push(chunk);
      total += chunk.length;
    }
  } catch (err) {
    answer.bodyError = err;
  }
  answer.body = Buffer.concat(chunks, total);
  return answer;
}

/**
 * `dispatcher.request`, rejecting as soon as `signal` aborts: undici aborts a request still
 * queued for a busy connection only once it gets one.
 */
function requestOrAbort(dispatcher: Dispatcher, options: Dispatcher.RequestOptions, signal: AbortSignal | undefined): Promise<Dispatcher.ResponseData> {
  if (!signal) return dispatcher.request(options);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    dispatcher
      .request(options)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

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
