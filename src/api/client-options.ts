//! The options of the service client (client.ts), and the checks of its address and limits.
import { ConfigError } from '../errors.js';
import type { Logger } from '../telemetry/logger.js';
import type { Clock } from '../time/clock.js';
import type { ProxySetting } from '../net/proxy.js';
import type { ApiObserver } from './types.js';

/** Default of {@link ApiClientOptions.maxResponseBytes}: 64 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Timeouts of one HTTP attempt. */
export interface ApiTimeouts {
  /** Establishing the TCP/TLS connection. Default 10 s. */
  connectMs: number;
  /** From sending the request to receiving the complete response headers. Default 30 s. */
  headersMs: number;
  /** Longest silence while the body is received. Default 30 s. */
  bodyMs: number;
}

/** Retry policy of one call (all its attempts). */
export interface ApiRetryPolicy {
  /** Total time for a call, attempts and waits included. Default 60 s. */
  deadlineMs: number;
  /** Ceiling of the first backoff delay; doubles each retry. Default 250 ms. */
  baseDelayMs: number;
  /** Largest backoff ceiling. Default 10 s. */
  maxDelayMs: number;
}

/** Options of `createApiClient` (client.ts). */
export interface ApiClientOptions {
  /** Base address of the service, e.g. `https://host/` or `http://host/prefix`. A trailing `/` is optional. */
  baseUrl: string;
  /** The workspace API token. */
  token: string;
  /** `raw` (the spec): the header value is the token itself; `bearer`: `Bearer <token>`. Default `raw`. */
  authScheme?: 'raw' | 'bearer';
  timeouts?: Partial<ApiTimeouts>;
  retry?: Partial<ApiRetryPolicy>;
  /** Responses larger than this are refused without being read past it. Default 64 MiB. */
  maxResponseBytes?: number;
  /** PEM file of the CA(s) that sign the service's certificate, trusted besides Node's default ones. */
  caFile?: string;
  /** Accept any TLS certificate. For tests against self-signed services only; logs a warning. */
  insecureSkipVerify?: boolean;
  /** Proxy of the service: a URL, `false` for none; absent, the environment's (net/proxy.ts). */
  proxy?: ProxySetting;
  /** Keep-alive connections to the service. Default 4. */
  connections?: number;
  observer?: ApiObserver;
  logger?: Logger;
  /** Value of the `User-Agent` header. Default `model-log-shipper`. */
  userAgent?: string;
  /** Source of "now" for `Retry-After` dates and deadlines. */
  clock?: Clock;
  /** Random source of the backoff jitter (tests pin it). */
  random?: () => number;
}

/** The origin and path prefix (ending in `/`) of the service's base address; a ConfigError for an address the client cannot use. */
export function parseBaseUrl(baseUrl: string): { origin: string; prefix: string } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`the API URL is not a valid URL: ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`the API URL must start with http:// or https://, got ${url.protocol}`);
  }
  if (url.username || url.password) throw new ConfigError('the API URL must not carry credentials; give the token separately');
  if (url.search || url.hash) throw new ConfigError('the API URL must not carry a query string or fragment');
  const prefix = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return { origin: url.origin, prefix };
}
