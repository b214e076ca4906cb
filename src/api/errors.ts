//! Typed failures of the service client. Each has a stable `code`, says whether a retry
//! can help, and maps to the exit code of `mls`. No message, excerpt or detail ever
//! carries the API token: whatever came from the wire is scrubbed before it is stored.
import { ExitCode, MlsError } from '../errors.js';
import { clipExcerpt } from '../net/excerpt.js';

/** Longest excerpt of a response body kept on an error. */
export const EXCERPT_MAX_CHARS = 200;

const EXCERPT_WINDOW_CHARS = 2048;
const SECRET_MARGIN_CHARS = 512;

/** Common options of the API errors. */
export interface ApiErrorOptions {
  cause?: unknown;
  /** HTTP status of the response, when there was one. */
  status?: number;
}

/** Base class of every failure of the service client. */
export class ApiError extends MlsError {
  /** Whether the same request may succeed if sent again later. */
  readonly retryable: boolean;
  /** HTTP status of the response, when there was one. */
  readonly status?: number;
  constructor(code: `MLS_ERR_API_${string}`, message: string, retryable: boolean, options: ApiErrorOptions & { exitCode?: ExitCode } = {}) {
    super(code, message, { cause: options.cause, exitCode: options.exitCode ?? ExitCode.service });
    this.retryable = retryable;
    if (options.status !== undefined) this.status = options.status;
  }
}

/** The service refused the token (401 or 403). Not retryable; `mls` exits 3. */
export class ApiAuthError extends ApiError {
  constructor(status: number, options: { cause?: unknown } = {}) {
    super(
      'MLS_ERR_API_AUTH',
      `the service refused the API token (HTTP ${status}); check that the token is current and belongs to this workspace`,
      false,
      { ...options, status, exitCode: ExitCode.auth },
    );
  }
}

/**
 * The service rejected the request (a 4xx other than 401, 403 and 429). Not retried:
 * the caller decides, e.g. a 400 on a request that carried `next_token` means the token
 * was rejected or expired.
 */
export class ApiClientError extends ApiError {
  /** The service's own explanation (`details` of the error body), scrubbed, when it sent one. */
  readonly details?: string;
  constructor(message: string, status: number, details?: string, options: { cause?: unknown } = {}) {
    super('MLS_ERR_API_CLIENT', details ? `${message}: ${details}` : message, false, { ...options, status });
    if (details !== undefined) this.details = details;
  }
}

/**
 * The response does not follow the spec: not JSON, cut short, an HTML page with 200,
 * the wrong shape, or `status` other than `success`. Retryable: proxies and restarts
 * produce such answers transiently.
 */
export class ApiProtocolError extends ApiError {
  /** The start of the response body (at most {@link EXCERPT_MAX_CHARS} characters), scrubbed. */
  readonly excerpt: string;
  constructor(message: string, options: ApiErrorOptions & { excerpt?: string } = {}) {
    super('MLS_ERR_API_PROTOCOL', message, true, options);
    this.excerpt = options.excerpt ?? '';
  }
}

/** The service could not be reached or is overloaded: 5xx, 429, timeouts, refused or reset connections. */
export class ApiUnavailableError extends ApiError {
  /** How long the service asked to wait (`Retry-After`), in ms. */
  readonly retryAfterMs?: number;
  constructor(message: string, options: ApiErrorOptions & { retryAfterMs?: number } = {}) {
    super('MLS_ERR_API_UNAVAILABLE', message, true, options);
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The response is larger than the configured `maxResponseBytes`; it was not read past the
 * limit. Not retryable: the same request gets the same answer (the poller asks for a
 * shorter window instead).
 */
export class ApiResponseTooLargeError extends ApiError {
  readonly limitBytes: number;
  /** The size the response announced (Content-Length), when it announced one. */
  readonly responseBytes?: number;
  constructor(limitBytes: number, options: ApiErrorOptions & { responseBytes?: number } = {}) {
    super('MLS_ERR_API_TOO_LARGE', `the response (${describeResponseSize(limitBytes, options.responseBytes)}) is larger than api.max_response_bytes (${limitBytes} bytes)`, false, options);
    this.limitBytes = limitBytes;
    if (options.responseBytes !== undefined) this.responseBytes = options.responseBytes;
  }

  /** The response's size in words: `N bytes`, or `more than N bytes` when it announced none. */
  get size(): string {
    return describeResponseSize(this.limitBytes, this.responseBytes);
  }
}

function describeResponseSize(limitBytes: number, responseBytes: number | undefined): string {
  return responseBytes !== undefined ? `${responseBytes} bytes` : `more than ${limitBytes} bytes`;
}

/**
 * Makes a short, single-line, token-free excerpt of a response body for an error.
 * `scrub` replaces secrets (the client passes one that removes its token).
 */
export function makeExcerpt(body: string, scrub: (text: string) => string = (t) => t): string {
  let head = scrub(body.slice(0, EXCERPT_WINDOW_CHARS));
  // A secret cut in two by the window would escape the scrub; tokens are shorter than
  // the margin, so dropping the window's tail removes any such half.
  if (body.length > EXCERPT_WINDOW_CHARS) head = head.slice(0, -SECRET_MARGIN_CHARS);
  return clipExcerpt(head, EXCERPT_MAX_CHARS);
}
