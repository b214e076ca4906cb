//! The webhook sink: POSTs each batch to an HTTP endpoint, at least once. Every attempt
//! at one batch carries the same `Idempotency-Key` (the batch id, derived from the sink
//! name and seq range), so a receiver can drop repeats after a retry or a crash.
//! 2xx acknowledges; 408, 429, 5xx, network errors and timeouts are retried (honouring
//! `Retry-After`); any other status rejects the batch to the dead-letter table.
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Pool } from 'undici';
import type { WebhookSinkConfig } from './config.js';
import { ConfigError, describeError } from '../../errors.js';
import { registerSecret, scrubWireText } from '../../telemetry/secrets.js';
import type { SendOutcome, Sink, SinkBatch, SinkContext } from '../contract.js';
import { CONTENT_TYPES, SIGNATURE_HEADER, encodeBody, renderBatchBody, signatureHeader } from './wire.js';
import { parseRetryAfter } from '../../net/retry-after.js';
import { probeTcp } from '../../net/probe.js';
import { clipExcerpt } from '../../net/excerpt.js';

export { CONTENT_TYPES, SIGNATURE_HEADER, renderBody, signatureHeader } from './wire.js';

/** Longest excerpt of a response body quoted in an error. */
const EXCERPT_CHARS = 300;
/** Most response bytes read to build an excerpt; the rest is discarded. */
const EXCERPT_READ_BYTES = 4096;
const HEALTHCHECK_TIMEOUT_MS = 5_000;

/**
 * Headers the sink owns. A configured header of the same name is ignored: these carry
 * the framing, the idempotency and the integrity of the request.
 */
const RESERVED_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'host', 'idempotency-key', SIGNATURE_HEADER]);

/**
 * Builds a webhook sink from its parsed config block (durations in ms). Header values
 * and the signing secret are registered as secrets, so the logger scrubs them, and
 * are also cut out of every error the sink returns. Throws a ConfigError when `ca_file`
 * cannot be read or `url` is not http(s).
 */
export function createWebhookSink(config: WebhookSinkConfig, ctx: SinkContext): Sink {
  const url = new URL(config.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const msg = `sinks.${ctx.name}.url: expected an http or https URL, got ${url.protocol}`;
    throw new ConfigError(msg, [msg]);
  }
  const secrets: string[] = [];
  for (const value of Object.values(config.headers ?? {})) secrets.push(value);
  if (config.signing_secret) secrets.push(config.signing_secret);
  for (const s of secrets) registerSecret(s);
  const redact = scrubWireText;

  let ca: string[] | undefined;
  if (config.ca_file) {
    try {
      // Extra authorities: the public roots stay trusted too.
      ca = [...rootCertificates, readFileSync(config.ca_file, 'utf8')];
    } catch (err) {
      const msg = `sinks.${ctx.name}.ca_file: cannot read ${config.ca_file}: ${describeError(err)}`;
      throw new ConfigError(msg, [msg], { cause: err });
    }
  }

  const timeoutMs = config.timeout;
  const pool = new Pool(url.origin, {
    connections: Math.max(1, config.concurrency ?? 1),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: Math.min(timeoutMs, 10_000),
    ...(ca ? { connect: { ca } } : {}),
  });
  // The query string may carry a credential; errors name the origin and path only.
  const where = `${url.origin}${url.pathname}`;
  const path = `${url.pathname}${url.search}`;

  const baseHeaders: Record<string, string> = { 'content-type': CONTENT_TYPES[config.format], 'user-agent': 'model-log-shipper' };
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) {
      ctx.logger.warn({ sink: ctx.name, header: name }, 'Ignoring a configured header the webhook sink sets itself.');
      continue;
    }
    baseHeaders[lower] = value;
  }
  if (config.compression === 'gzip') baseHeaders['content-encoding'] = 'gzip';

  let closing: Promise<void> | undefined;

  const send = async (batch: SinkBatch, signal: AbortSignal): Promise<SendOutcome> => {
    if (closing) return { status: 'retry', error: 'the webhook sink is closed' };
    if (signal.aborted) return { status: 'retry', error: 'aborted' };
    const empty = batch.ndjson ? batch.ndjson.every((c) => c.timesNs.length === 0) : batch.entries.length === 0;
    if (empty) return { status: 'ok' };
    const body = await encodeBody(renderBatchBody(batch, config.format), config.compression);
    const headers: Record<string, string> = { ...baseHeaders, 'idempotency-key': batch.id };
    if (config.signing_secret) headers[SIGNATURE_HEADER] = signatureHeader(config.signing_secret, body, ctx.now() / 1000);

    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    timer.unref();
    try {
      const res = await pool.request({ method: 'POST', path, headers, body, signal: AbortSignal.any([signal, timeout.signal]) });
      const status = res.statusCode;
      if (status >= 200 && status < 300) {
        // The receiver already said 2xx: a body that fails to drain changes nothing about the delivery.
        await res.body.dump().catch(() => undefined);
        return { status: 'ok' };
      }
      const excerpt = redact(await readExcerpt(res.body));
      const error = `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`;
      if (status === 408 || status === 429 || status >= 500) {
        const afterMs = parseRetryAfter(res.headers['retry-after'], ctx.now());
        if (afterMs === undefined) return { status: 'retry', error };
        return { status: 'retry', afterMs: Math.min(afterMs, config.retry.max_delay), error };
      }
      return { status: 'reject', error };
    } catch (err) {
      if (timeout.signal.aborted && !signal.aborted) return { status: 'retry', error: `POST ${where}: no response within ${timeoutMs} ms` };
      if (signal.aborted) return { status: 'retry', error: 'aborted' };
      return { status: 'retry', error: redact(`POST ${where}: ${describeTransportError(err, timeoutMs)}`) };
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    healthcheck() {
      return probeTcp(url, Math.min(timeoutMs, HEALTHCHECK_TIMEOUT_MS));
    },
    send,
    async flush() {
      // Nothing is buffered: a batch is acknowledged only once the receiver answered 2xx.
    },
    close() {
      closing ??= pool.close().catch(() => pool.destroy());
      return closing;
    },
  };
}

/** Reads the start of a response body as one line of at most {@link EXCERPT_CHARS} characters. */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= EXCERPT_READ_BYTES) break;
    }
  } catch {
    // A body cut short still yields what was read.
  } finally {
    body.destroy();
  }
  return clipExcerpt(Buffer.concat(chunks).toString('utf8'), EXCERPT_CHARS);
}

function describeTransportError(err: unknown, timeoutMs: number): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `no response within ${timeoutMs} ms (${code})`;
  }
  const text = describeError(err);
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}
