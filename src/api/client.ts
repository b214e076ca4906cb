//! The HTTP client of the model-management service: both operations through one undici
//! dispatcher (net/dispatcher.ts: proxy, TLS trust, keep-alive connections, timeouts), with
//! a response size limit, retries within a deadline, and typed errors. The API token goes
//! into the `Authorization` header and nowhere else: it is scrubbed from every message,
//! excerpt and log line.
import { ConfigError } from '../errors.js';
import { registerSecret, scrubWireText } from '../telemetry/secrets.js';
import { LogThrottle } from '../telemetry/log-throttle.js';
import { systemClock } from '../time/clock.js';
import { formatRequestTime } from '../time/canonical.js';
import { ApiAuthError, ApiClientError, ApiError, ApiProtocolError, ApiResponseTooLargeError, ApiUnavailableError } from './errors.js';
import { withRetry } from './retry.js';
import { parseRetryAfter } from '../net/retry-after.js';
import { createDispatcher, readTls } from '../net/dispatcher.js';
import { exchange, type HttpAnswer } from '../net/http-client.js';
import { proxyFor, proxyLabel } from '../net/proxy.js';
import { describeTransportError, errorCode } from '../net/transport-errors.js';
import type { ApiClient, LogsPage, LogsRequest, ModelSettings, SettingsResult } from './types.js';
import { parseErrorDetails, parseSettingsBody } from './wire.js';
import { createPageParser } from './page/index.js';
import { DEFAULT_MAX_RESPONSE_BYTES, parseBaseUrl, type ApiClientOptions, type ApiRetryPolicy, type ApiTimeouts } from './client-options.js';

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
  latencyMs: number;
}

/**
 * Creates the service client; close it with `close()`.
 * @throws ConfigError for an unusable URL, token, proxy or option.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const { origin, prefix } = parseBaseUrl(options.baseUrl);
  const token = options.token;
  if (typeof token !== 'string' || token.trim() === '') throw new ConfigError('the API token is empty');
  if (/[\r\n\0]/.test(token)) throw new ConfigError('the API token contains a line break or NUL; check the token file');
  registerSecret(token);
  const authorization = options.authScheme === 'bearer' ? `Bearer ${token}` : token;
  // the config and the command line have checked that each is positive
  const timeouts: ApiTimeouts = { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000, ...options.timeouts };
  const retry: ApiRetryPolicy = { deadlineMs: 60_000, baseDelayMs: 250, maxDelayMs: 10_000, ...options.retry };
  let maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const clock = options.clock ?? systemClock;
  const logger = options.logger && 'component' in options.logger.bindings() ? options.logger : options.logger?.child({ component: 'api' });
  const observer = options.observer;

  const proxy = proxyFor(new URL(origin), options.proxy, 'api.proxy');
  const dispatcher = createDispatcher({
    proxy,
    tls: readTls({ setting: 'api.', caFile: options.caFile, insecure: options.insecureSkipVerify }),
    ...timeouts,
    connections: options.connections ?? 4,
  });
  if (options.insecureSkipVerify) {
    logger?.warn({ origin }, 'TLS certificate verification is off: anyone on the path can read the token and the logs');
  }
  const route = proxy ? `${origin} through the proxy ${proxyLabel(proxy)}` : origin;
  if (proxy) logger?.info({ origin, proxy: proxyLabel(proxy) }, 'requests to the service go through a proxy');

  // The token was registered above: scrubWireText (which the body readers use too) knows every form it can come back in.
  const retryWarnings = new LogThrottle(RETRY_WARN_INTERVAL_MS);

  const requestHeaders = {
    authorization,
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': options.userAgent ?? 'model-log-shipper',
  };
  const limitFor = (status: number): number => (status >= 200 && status < 300 ? maxResponseBytes : ERROR_BODY_LIMIT);
  const readPage = createPageParser();

  /** The `details` of an error body, if it was read whole. */
  function errorDetails(res: HttpAnswer): string | undefined {
    return res.tooLarge || res.bodyError !== undefined ? undefined : parseErrorDetails(res.body.toString('utf8'));
  }

  /** One HTTP attempt: sends the request, classifies the status, returns a 2xx body. */
  async function attempt(path: string, payload: string, signal: AbortSignal): Promise<Answer> {
    const started = performance.now();
    let res: HttpAnswer;
    try {
      // Both operations are idempotent (reading a page changes nothing; an update sets the
      // same values again), so the exchange may send one again when a closing connection cut it off.
      res = await exchange(dispatcher, { origin, path, headers: requestHeaders, body: payload, signal, limitFor });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ApiUnavailableError(scrubWireText(`cannot reach the service at ${route}: ${describeTransportError(err)}`), { cause: err });
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
        const where = typeof location === 'string' ? ` to ${scrubWireText(location)}` : '';
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
    const err = res.bodyError;
    if (err !== undefined) {
      if (signal.aborted) throw err;
      if (errorCode(err) === 'UND_ERR_BODY_TIMEOUT') {
        throw new ApiUnavailableError(`the service stopped sending the response body (HTTP ${status}): ${describeTransportError(err)}`, { status, cause: err });
      }
      throw new ApiProtocolError(`the response body was cut short (HTTP ${status}): ${scrubWireText(describeTransportError(err))}`, { status, cause: err });
    }
    return { status, body: res.body, latencyMs: performance.now() - started };
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

  async function call<T>(operation: Operation, modelId: string, path: string, payload: string, parse: (a: Answer) => T, signal: AbortSignal | undefined): Promise<T> {
    return withRetry(
      async ({ signal: attemptSignal }) => {
        const started = performance.now();
        try {
          const answer = await attempt(path, payload, attemptSignal);
          const result = parse(answer);
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
          const fields = { operation, modelId, attempt: n, delayMs, code, err: error instanceof Error ? error.message : String(error) };
          logger?.[retryWarnings.take(clock.now()) ? 'warn' : 'debug'](fields, 'request to the service failed; retrying');
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
      const parse = (a: Answer): LogsPage => Object.assign(readPage(a.body, a.status), { httpStatus: a.status, latencyMs: a.latencyMs, bytes: a.body.length });
      return call('logs', req.modelId, prefix + LOGS_PATH, JSON.stringify(body), parse, signal);
    },

    updateSettings(modelId: string, data: ModelSettings, signal?: AbortSignal): Promise<SettingsResult> {
      const body = JSON.stringify({ model_id: modelId, data });
      return call('settings', modelId, prefix + SETTINGS_PATH, body, (a) => parseSettingsBody(a.body.toString('utf8'), a.status), signal);
    },

    setMaxResponseBytes(bytes: number): void {
      maxResponseBytes = bytes;
    },

    close(): Promise<void> {
      closing ??= dispatcher.close();
      return closing;
    },
  };
}
