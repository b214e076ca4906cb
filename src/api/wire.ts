//! Validation of the service's response bodies against the spec. Pure functions: a body
//! and its HTTP status in, validated values out, an `ApiProtocolError` for anything else.
//! Fields the spec does not name are ignored.
import type { LogEntry, SettingsResult } from './types.js';
import { ApiProtocolError, makeExcerpt } from './errors.js';

/** Options of the body parsers. */
export interface WireOptions {
  /** Removes secrets from the text of excerpts; the client passes one that removes its token. */
  scrub?: (text: string) => string;
}

/** A validated page of the *get model logs* response. */
export interface LogsBody {
  entries: LogEntry[];
  /** `undefined` when the service signalled the end: `next_token` absent, `null` or `""`. */
  nextToken: string | undefined;
}

function protocolError(message: string, body: string, status: number, options: WireOptions, cause?: unknown): ApiProtocolError {
  return new ApiProtocolError(message, { status, excerpt: makeExcerpt(body, options.scrub), cause });
}

function looksLikeHtml(body: string): boolean {
  return body.trimStart().startsWith('<');
}

/** Parses the body as a JSON object whose `status` is `success`. */
function parseSuccessObject(body: string, status: number, operation: string, options: WireOptions): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    const what = body.trim() === '' ? 'an empty body' : looksLikeHtml(body) ? 'an HTML page' : 'a body that is not valid JSON';
    throw protocolError(`the ${operation} response (HTTP ${status}) is ${what}`, body, status, options, err);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw protocolError(`the ${operation} response (HTTP ${status}) is not a JSON object`, body, status, options);
  }
  const obj = value as Record<string, unknown>;
  if (obj.status !== 'success') {
    // The service's text is scrubbed before it is cut, so that no part of a secret survives.
    const scrub = options.scrub ?? ((t: string) => t);
    const got = typeof obj.status === 'string' ? `"${scrub(obj.status).slice(0, 40)}"` : obj.status === undefined ? 'missing' : typeof obj.status;
    throw protocolError(`the ${operation} response (HTTP ${status}) has status ${got} instead of "success"`, body, status, options);
  }
  return obj;
}

/**
 * Validates a *get model logs* response body: `status` is `success`, `details` is an array
 * of objects with string `time`, `log` and `stream`, and `next_token` is a string, `null`
 * or absent. Entries are copied, so extra fields do not travel further.
 * @throws ApiProtocolError for anything off-spec.
 */
export function parseLogsBody(body: string, status: number, options: WireOptions = {}): LogsBody {
  const obj = parseSuccessObject(body, status, 'logs', options);
  const details = obj.details;
  if (!Array.isArray(details)) {
    throw protocolError(`the logs response (HTTP ${status}) has no "details" array`, body, status, options);
  }
  const entries: LogEntry[] = new Array(details.length);
  for (let i = 0; i < details.length; i++) {
    const d: unknown = details[i];
    if (d === null || typeof d !== 'object' || Array.isArray(d)) {
      throw protocolError(`the logs response (HTTP ${status}) has details[${i}] that is not an object`, body, status, options);
    }
    const { time, log, stream } = d as Record<string, unknown>;
    if (typeof time !== 'string' || typeof log !== 'string' || typeof stream !== 'string') {
      const field = typeof time !== 'string' ? 'time' : typeof log !== 'string' ? 'log' : 'stream';
      throw protocolError(`the logs response (HTTP ${status}) has details[${i}].${field} that is not a string`, body, status, options);
    }
    entries[i] = { time, log, stream };
  }
  const token = obj.next_token;
  let nextToken: string | undefined;
  if (token === undefined || token === null || token === '') nextToken = undefined;
  else if (typeof token === 'string') nextToken = token;
  else throw protocolError(`the logs response (HTTP ${status}) has a "next_token" that is a ${typeof token}, not a string`, body, status, options);
  return { entries, nextToken };
}

/**
 * Validates an *update model settings* response body: `status` is `success` and `details`
 * is the service's confirmation text.
 * @throws ApiProtocolError for anything off-spec.
 */
export function parseSettingsBody(body: string, status: number, options: WireOptions = {}): SettingsResult {
  const obj = parseSuccessObject(body, status, 'settings', options);
  if (typeof obj.details !== 'string') {
    throw protocolError(`the settings response (HTTP ${status}) has no "details" text`, body, status, options);
  }
  return { details: obj.details };
}

/**
 * Extracts the service's explanation from an error response body, if it has one: the
 * `details` (or `message`, `error`) text of a JSON object. Never throws.
 */
export function parseErrorDetails(body: string, options: WireOptions = {}): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  for (const key of ['details', 'message', 'error', 'detail']) {
    const v = obj[key];
    let text: string | undefined;
    if (typeof v === 'string' && v.trim() !== '') text = v;
    else if (v !== null && typeof v === 'object') text = JSON.stringify(v);
    if (text !== undefined) return makeExcerpt(text, options.scrub);
  }
  return undefined;
}
