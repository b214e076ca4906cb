//! Validation of the service's response bodies against the spec. Pure functions: a body
//! and its HTTP status in, validated values out, an `ApiProtocolError` for anything else.
//! Fields the spec does not name are ignored. The logs body has its own readers (api/page/;
//! the full validation is api/page/json.ts, built on the checks here). Whatever is quoted
//! from a body is scrubbed of the registered secrets (the API token among them).
import type { SettingsResult } from './types.js';
import { ApiProtocolError, makeExcerpt } from './errors.js';
import { scrubWireText } from '../telemetry/secrets.js';

/** The error for a body off the spec, with a scrubbed excerpt of it. */
export function protocolError(message: string, body: string, status: number, cause?: unknown): ApiProtocolError {
  return new ApiProtocolError(message, { status, excerpt: makeExcerpt(body, scrubWireText), cause });
}

function looksLikeHtml(body: string): boolean {
  return body.trimStart().startsWith('<');
}

/** Parses the body as a JSON object whose `status` is `success`. */
export function parseSuccessObject(body: string, status: number, operation: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    const what = body.trim() === '' ? 'an empty body' : looksLikeHtml(body) ? 'an HTML page' : 'a body that is not valid JSON';
    throw protocolError(`the ${operation} response (HTTP ${status}) is ${what}`, body, status, err);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw protocolError(`the ${operation} response (HTTP ${status}) is not a JSON object`, body, status);
  }
  const obj = value as Record<string, unknown>;
  if (obj.status !== 'success') {
    // The service's text is scrubbed before it is cut, so that no part of a secret survives.
    const got = typeof obj.status === 'string' ? `"${scrubWireText(obj.status).slice(0, 40)}"` : obj.status === undefined ? 'missing' : typeof obj.status;
    throw protocolError(`the ${operation} response (HTTP ${status}) has status ${got} instead of "success"`, body, status);
  }
  return obj;
}

/**
 * Validates an *update model settings* response body: `status` is `success` and `details`
 * is the service's confirmation text.
 * @throws ApiProtocolError for anything off-spec.
 */
export function parseSettingsBody(body: string, status: number): SettingsResult {
  const obj = parseSuccessObject(body, status, 'settings');
  if (typeof obj.details !== 'string') {
    throw protocolError(`the settings response (HTTP ${status}) has no "details" text`, body, status);
  }
  return { details: obj.details };
}

/**
 * Extracts the service's explanation from an error response body, if it has one: the
 * `details` (or `message`, `error`) text of a JSON object. Never throws.
 */
export function parseErrorDetails(body: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    // An error body that is not JSON (an HTML page, a proxy's text) simply has no details.
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  for (const key of ['details', 'message', 'error', 'detail']) {
    const v = obj[key];
    let text: string | undefined;
    if (typeof v === 'string' && v.trim() !== '') text = v;
    else if (v !== null && typeof v === 'object') text = JSON.stringify(v);
    if (text !== undefined) return makeExcerpt(text, scrubWireText);
  }
  return undefined;
}
