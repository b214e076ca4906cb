//! The HTTP client of the model-management service: both operations over one keep-alive
//! connection pool, with timeouts, a response size limit, retries within a deadline, and
//! typed errors. The API token goes into the `Authorization` header and nowhere else: it
//! is scrubbed from every message, excerpt and log line.
import { readFileSync } from 'node:fs';
import { Http1Pool } from './http1/pool.js';
import { ConfigError } from '../errors.js';
import { registerSecret, scrubWireText } from '../telemetry/secrets.js';
import { systemClock } from '../time/clock.js';
import { formatRequestTime } from '../time/canonical.js';
import {
  ApiAuthError,
  ApiClientError,
  ApiError,
  ApiProtocolError,
  ApiResponseTooLargeError,
  ApiUnavailableError,
} from './errors.js';
import { BodyPool } from './body-pool.js';
import { exchange, type Exchanged } from './exchange.js';
import type { AbortWatch } from './call-abort.js';
import { withRetry } from './retry.js';
import { parseRetryAfter } from '../net/retry-after.js';
import type { ApiClient, LogsPage, LogsRequest, ModelSettings, SettingsResult } from './types.js';
import { parseErrorDetails, parseSettingsBody } from './wire.js';
import { createPageParser } from './page/index.js';
import { describeTransportError, errorCode } from './transport-errors.js';
import { DEFAULT_MAX_RESPONSE_BYTES, parseBaseUrl, positive, type ApiClientOptions, type ApiRetryPolicy, type ApiTimeouts } from './client-options.js';

/** Error bodies are read only this far, for their `details`. */
const ERROR_BODY_LIMIT = 64 * 1024;
const LOGS_PATH = 'rest/model/logs/get/';
const SETTINGS_PATH = 'rest/model/settings/update/';
/** At most one retry per this interval is logged at WARN; the others at DEBUG. */
const RETRY_WARN_INTERVAL_MS = 30_000;

type Operation = 'logs' | 'settings';

interface Answer {
  status: number;
  body: Buffer;
  bytes: number;
  latencyMs: number;
}

/**
 * Creates the service client. One keep-alive connection pool serves every request; close
 * it with `close()`.
 * @throws ConfigError for an unusable URL, token or option.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const { origin, prefix } = parseBaseUrl(options.baseUrl);
  const token = options.token;
  if (typeof token !== 'string' || token.trim() === '') throw new ConfigError('the API token is empty');
  if (/[\r\n\0]/.test(token)) throw new ConfigError('the API token contains a line break or NUL; check the token file');
  registerSecret(token);
  const authorization = options.authScheme === 'bearer' ? `Bearer ${token}` : token;
  const timeouts: ApiTimeouts = {
    connectMs: positive('timeouts.connectMs', options.timeouts?.connectMs, 10_000),
    headersMs: positive('timeouts.headersMs', options.timeouts?.headersMs, 30_000),
    bodyMs: positive('timeouts.bodyMs', options.timeouts?.bodyMs, 30_000),
  };
  const retry: ApiRetryPolicy = {
    deadlineMs: positive('retry.deadlineMs', options.retry?.deadlineMs, 60_000),
    baseDelayMs: positive('retry.baseDelayMs', options.retry?.baseDelayMs, 250),
    maxDelayMs: positive('retry.maxDelayMs', options.retry?.maxDelayMs, 10_000),
  };
  let maxResponseBytes = positive('maxResponseBytes', options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES);
  const clock = options.clock ?? systemClock;
  const logger = options.logger && 'component' in options.logger.bindings() ? options.logger : options.logger?.child({ component: 'api' });
  const observer = options.observer;
  const userAgent = options.userAgent ?? 'model-log-shipper';

  let ca: string[] | undefined;
  if (options.caFile !== undefined) {
    try {
      // extra authorities: the public roots stay trusted
      ca = [...process.getBuiltinModule('node:tls').rootCertificates, readFileSync(options.caFile, 'utf8')];
    } catch (err) {
      throw new ConfigError(`cannot read the CA file ${options.caFile}: ${(err as Error).message}`, [], { cause: err });
    }
  }
  if (options.insecureSkipVerify) {
    logger?.warn({ origin }, 'TLS certificate verification is off: anyone on the path can read the token and the logs');
  }

  const pool = new Http1Pool(origin, {
    connections: options.connections ?? 4,
    connectMs: timeouts.connectMs,
    headersMs: timeouts.headersMs,
    bodyMs: timeouts.bodyMs,
    ...(ca ? { ca } : {}),
    ...(options.insecureSkipVerify ? { rejectUnauthorized: false } : {}),
  });

  // the token was registered above: the shared scrubber knows every form it can come back in
  const scrub = scrubWireText;
  let lastRetryWarnAt = -Infinity;

  const requestHeaders = {
    authorization,
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': userAgent,
  };
  const limitFor = (status: number): number => (status >= 200 && status < 300 ? maxResponseBytes : ERROR_BODY_LIMIT);
  const bodies = options.bodies ?? new BodyPool();
  const readPage = createPageParser({ scrub });

  /** The `details` of an error body, if it could be read. */
  function errorDetails(res: Exchanged): string | undefined {
    if (res.body === undefined) return undefined;
    try {
      return parseErrorDetails(res.body.toString('utf8'), { scrub });
    } catch {
      // Details are a courtesy of the error message; the status alone decides what happens.
      return undefined;
    }
  }

  /** One HTTP attempt: sends the request, classifies the status, returns a 2xx body. */
  async function attempt(path: string, payload: string, abort: AbortWatch, pooled: boolean): Promise<Answer> {
    const started = performance.now();
    let res: Exchanged;
    try {
      res = await exchange(pool, { path, method: 'POST', headers: requestHeaders, body: payload, abort, limitFor, bodies: pooled ? bodies : undefined });
    } catch (err) {
      if (abort.aborted) throw err;
      throw new ApiUnavailableError(scrub(`cannot reach the service at ${origin}: ${describeTransportError(err)}`), { cause: err });
    }
    const status = res.status;
    if (status === 401 || status === 403) throw new ApiAuthError(status);
    if (status === 429 || status >= 500) {
      const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after'], clock.now()) : undefined;
      const details = errorDetails(res);
      const what = status === 429 ? 'the service is rate limiting requests' : 'the service failed to answer';
      throw new ApiUnavailableError(`${what} (HTTP ${status})${details ? `: ${details}` : ''}`, { status, retryAfterMs });
    }
    if (status >= 300) {
      if (status < 400) {
        const location = res.headers.location;
        const where = typeof location === 'string' ? ` to ${scrub(location)}` : '';
        throw new ApiClientError(`the service redirected the request${where} (HTTP ${status}); check the API URL`, status);
      }
      throw new ApiClientError(`the service rejected the request (HTTP ${status})`, status, errorDetails(res));
    }
    if (res.tooLarge) {
      const limit = limitFor(status);
      // A Content-Length within the limit that the body then overran says nothing true.
      const announced = res.declaredBytes !== undefined && res.declaredBytes > limit ? { responseBytes: res.declaredBytes } : {};
      throw new ApiResponseTooLargeError(limit, { status, ...announced });
    }
    if (res.body === undefined) {
      const err = res.bodyError;
      if (abort.aborted) throw err;
      if (errorCode(err) === 'MLS_HTTP_BODY_TIMEOUT') {
        throw new ApiUnavailableError(`the service stopped sending the response body (HTTP ${status}): ${describeTransportError(err)}`, { status, cause: err });
      }
      throw new ApiProtocolError(`the response body was cut short (HTTP ${status}): ${scrub(describeTransportError(err))}`, { status, cause: err });
    }
    return { status, body: res.body, bytes: res.body.length, latencyMs: performance.now() - started };
  }

  // The parts of the retry options that are the same for every call.
  const retryOptions = {
    ...retry,
    clock,
    ...(options.random ? { random: options.random } : {}),
    isRetryable: (err: unknown) => err instanceof ApiError && err.retryable,
    retryAfterMs: (err: unknown) => (err instanceof ApiUnavailableError ? err.retryAfterMs : undefined),
    deadlineError: (abortError: unknown) => new ApiUnavailableError(`no answer from the service within the deadline of ${retry.deadlineMs} ms`, { cause: abortError }),
  };

  /** `pooled`: a successful answer's body is a buffer of `bodies`, which `parse` takes over (given back here if it throws). */
  async function call<T>(operation: Operation, modelId: string, path: string, payload: string, parse: (a: Answer) => T, signal: AbortSignal | undefined, pooled = false): Promise<T> {
    return withRetry(
      async ({ abort }) => {
        const started = performance.now();
        try {
          const answer = await attempt(path, payload, abort, pooled);
          let result: T;
          try {
            result = parse(answer);
          } catch (err) {
            if (pooled) bodies.give(answer.body);
            throw err;
          }
          observer?.onAttempt?.({ operation, modelId, status: answer.status, latencyMs: answer.latencyMs });
          return result;
        } catch (err) {
          // Abandoned by the caller (the daemon is stopping): not an answer of the service.
          if (signal?.aborted) throw err;
          const status = err instanceof ApiError && err.status !== undefined ? err.status : 'error';
          observer?.onAttempt?.({ operation, modelId, status, latencyMs: performance.now() - started, errorCode: errorCode(err) });
          throw err;
        }
      },
      {
        ...retryOptions,
        ...(signal ? { signal } : {}),
        onRetry: ({ attempt: n, delayMs, error }) => {
          const code = errorCode(error);
          observer?.onRetry?.({ operation, modelId, attempt: n, delayMs, errorCode: code });
          const now = clock.now();
          const fields = { operation, modelId, attempt: n, delayMs, code, err: error instanceof Error ? error.message : String(error) };
          if (now - lastRetryWarnAt >= RETRY_WARN_INTERVAL_MS) {
            lastRetryWarnAt = now;
            logger?.warn(fields, 'request to the service failed; retrying');
          } else {
            logger?.debug(fields, 'request to the service failed; retrying');
          }
        },
      },
    );
  }

  let closing: Promise<void> | undefined;

  return {
    getLogs(req: LogsRequest, signal?: AbortSignal): Promise<LogsPage> {
      const body: Record<string, unknown> = {
        model_id: req.modelId,
        time_from: formatRequestTime(req.fromMs),
        time_to: formatRequestTime(req.toMs),
      };
      if (req.isLessLogs !== undefined) body.is_less_logs = req.isLessLogs;
      if (req.nextToken !== undefined) body.next_token = req.nextToken;
      return call(
        'logs',
        req.modelId,
        prefix + LOGS_PATH,
        JSON.stringify(body),
        (a): LogsPage => {
          const page = readPage(a.body, a.status);
          return Object.assign(page, { httpStatus: a.status, latencyMs: a.latencyMs, bytes: a.bytes });
        },
        signal,
        true,
      );
    },

    updateSettings(modelId: string, data: ModelSettings, signal?: AbortSignal): Promise<SettingsResult> {
      const body = JSON.stringify({ model_id: modelId, data });
      return call('settings', modelId, prefix + SETTINGS_PATH, body, (a) => parseSettingsBody(a.body.toString('utf8'), a.status, { scrub }), signal);
    },

    setMaxResponseBytes(bytes: number): void {
      maxResponseBytes = positive('maxResponseBytes', bytes, maxResponseBytes);
    },

    close(): Promise<void> {
      closing ??= pool.close();
      return closing;
    },
  };
}
