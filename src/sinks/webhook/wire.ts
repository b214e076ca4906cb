//! The bytes and headers of one webhook request: body rendering, compression, the
//! signature, and the reading of `Retry-After`.
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { SinkEntry } from '../contract.js';
import { entryToNdjson } from '../format.js';

const gzip = promisify(gzipCallback);

/** Name of the signature header. */
export const SIGNATURE_HEADER = 'x-mls-signature';

/** Content type of each body format. */
export const CONTENT_TYPES = { ndjson: 'application/x-ndjson', json: 'application/json' } as const;

/**
 * Renders a batch: `ndjson` is one JSON object per line (each line ends with `\n`),
 * `json` is one JSON array of the same objects. Every object has the keys `model_id`,
 * `time` (the service's string, unchanged), `stream` and `log`.
 */
export function renderBody(entries: readonly SinkEntry[], format: 'ndjson' | 'json'): string {
  if (format === 'ndjson') {
    let out = '';
    for (const e of entries) out += entryToNdjson(e);
    return out;
  }
  const parts = new Array<string>(entries.length);
  for (let i = 0; i < entries.length; i++) parts[i] = entryToNdjson(entries[i]!).slice(0, -1);
  return '[' + parts.join(',') + ']';
}

/** The body as sent: UTF-8, gzipped when asked. */
export async function encodeBody(text: string, compression: 'none' | 'gzip'): Promise<Buffer> {
  const raw = Buffer.from(text, 'utf8');
  return compression === 'gzip' ? gzip(raw) : raw;
}

/**
 * The `X-MLS-Signature` value: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
 * where `body` is the exact bytes of the request body (after compression).
 */
export function signatureHeader(secret: string, body: Uint8Array, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
  return `t=${t},v1=${mac}`;
}

/**
 * Milliseconds to wait according to a `Retry-After` value (delay in seconds or an HTTP
 * date), or `undefined` when it is absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
