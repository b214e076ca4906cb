//! The bytes and headers of one webhook request: body rendering, compression and the
//! signature.
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';

const gzip = promisify(gzipCallback);

/** Name of the signature header. */
export const SIGNATURE_HEADER = 'x-mls-signature';

/** Content type of each body format. */
export const CONTENT_TYPES = { ndjson: 'application/x-ndjson', json: 'application/json' } as const;

/**
 * The body of a batch from its NDJSON lines: `ndjson` is the lines as they are (one JSON
 * object per line, each ending with `\n`), `json` is one JSON array of the same objects,
 * the newlines between them made commas (no line holds a raw newline). Every object has
 * the keys `model_id`, `time` (the service's string, unchanged), `stream` and `log`.
 */
export function renderBody(lines: Buffer, format: 'ndjson' | 'json'): Buffer {
  if (format === 'ndjson') return lines;
  const out = Buffer.allocUnsafe(lines.length + 2);
  out[0] = 0x5b; // [
  lines.copy(out, 1);
  for (let at = out.indexOf(0x0a, 1); at !== -1; at = out.indexOf(0x0a, at + 1)) out[at] = 0x2c; // ,
  // The last line's newline, now a comma, ends the array; an empty batch is "[]".
  const end = lines.length === 0 ? 1 : lines.length;
  out[end] = 0x5d; // ]
  return out.subarray(0, end + 1);
}

/** The body as sent: gzipped when asked. */
export async function encodeBody(raw: Buffer, compression: 'none' | 'gzip'): Promise<Buffer> {
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
