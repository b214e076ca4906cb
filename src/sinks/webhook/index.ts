//! The webhook sink: POSTs each batch to an HTTP endpoint, at least once. Every attempt
//! at one batch carries the same `Idempotency-Key` (the batch id, derived from the sink
//! name and seq range), so a receiver can drop repeats after a retry or a crash.
//! 2xx acknowledges; 408, 429, 5xx, network errors and timeouts are retried (honouring
//! `Retry-After`); any other status rejects the batch to the dead-letter table.
import type { WebhookSinkConfig } from './config.js';
import { scrubWireText } from '../../telemetry/secrets.js';
import type { SendOutcome, Sink, SinkBatch, SinkContext } from '../contract.js';
import { CONTENT_TYPES, SIGNATURE_HEADER, encodeBody, renderBody, signatureHeader } from './wire.js';
import { ndjsonBytes } from '../../records/ndjson.js';
import { batchChunks } from '../batch-ndjson.js';
import { createDispatcher, readTls } from '../../net/dispatcher.js';
import { answerOutcome, exchange } from '../../net/http-client.js';
import { probeTcp } from '../../net/probe.js';
import { proxyFor, proxyLabel } from '../../net/proxy.js';
import { clipExcerpt } from '../../net/excerpt.js';
import { describeTransportError, errorCode } from '../../net/transport-errors.js';

/** Longest excerpt of a response body quoted in an error. */
const EXCERPT_CHARS = 300;
/** Most response bytes read, to build an excerpt; the rest is discarded. */
const EXCERPT_READ_BYTES = 4096;
const HEALTHCHECK_TIMEOUT_MS = 5_000;

/**
 * Headers the sink owns. A configured header of the same name is ignored: these carry
 * the framing, the idempotency and the integrity of the request.
 */
const RESERVED_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'host', 'idempotency-key', SIGNATURE_HEADER]);

/**
 * Builds a webhook sink from its parsed config block (durations in ms). Header values
 * and the signing secret are secrets of the config (the loader registers them), so they
 * are cut out of every log line and every error the sink returns. Throws a ConfigError when `ca_file`
 * cannot be read or the proxy is unusable.
 */
export function createWebhookSink(config: WebhookSinkConfig, ctx: SinkContext): Sink {
  // an http(s) URL: the config's schema refuses any other
  const url = new URL(config.url);
  const setting = `sinks.${ctx.name}.`;

  const timeoutMs = config.timeout;
  const proxy = proxyFor(url, config.proxy, `${setting}proxy`);
  const dispatcher = createDispatcher({
    proxy,
    tls: readTls({ setting, caFile: config.ca_file }),
    connectMs: Math.min(timeoutMs, 10_000),
    headersMs: timeoutMs,
    bodyMs: timeoutMs,
    connections: config.concurrency,
  });
  // The query string may carry a credential; errors name the origin and path only.
  const where = `${url.origin}${url.pathname}`;
  const path = `${url.pathname}${url.search}`;
  const peer = { whose: "the receiver's", caSetting: `${setting}ca_file` };

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
    const lines = ndjsonBytes(batchChunks(batch));
    if (lines.length === 0) return { status: 'ok' };
    const body = await encodeBody(renderBody(lines, config.format), config.compression);
    const headers: Record<string, string> = { ...baseHeaders, 'idempotency-key': batch.id };
    if (config.signing_secret) headers[SIGNATURE_HEADER] = signatureHeader(config.signing_secret, body, ctx.now() / 1000);

    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      // A batch may be sent twice: the receiver drops a repeat by its Idempotency-Key.
      const res = await exchange(dispatcher, { origin: url.origin, path, headers, body, signal: AbortSignal.any([signal, timeout]), limitFor: () => EXCERPT_READ_BYTES });
      const excerpt = scrubWireText(clipExcerpt(res.body.toString('utf8'), EXCERPT_CHARS));
      return answerOutcome(res.status, res.headers['retry-after'], `HTTP ${res.status}${excerpt ? `: ${excerpt}` : ''}`, ctx.now(), config.retry.max_delay);
    } catch (err) {
      if (signal.aborted) return { status: 'retry', error: 'aborted' };
      // whichever of the request's own timer and undici's timeouts went off first
      if (timeout.aborted || /^UND_ERR_\w+_TIMEOUT$/.test(errorCode(err))) return { status: 'retry', error: `POST ${where}: no response within ${timeoutMs} ms` };
      return { status: 'retry', error: scrubWireText(`POST ${where}${proxy ? ` through the proxy ${proxyLabel(proxy)}` : ''}: ${describeTransportError(err, peer)}`) };
    }
  };

  return {
    async healthcheck() {
      // A TCP connect to where the requests go first (the proxy, if any): nothing is sent.
      const { ok, detail } = await probeTcp(proxy ?? url, Math.min(timeoutMs, HEALTHCHECK_TIMEOUT_MS));
      return { ok, detail: proxy ? `through the proxy ${detail}` : detail };
    },
    send,
    async flush() {
      // Nothing is buffered: a batch is acknowledged only once the receiver answered 2xx.
    },
    close() {
      closing ??= dispatcher.close().catch(() => dispatcher.destroy());
      return closing;
    },
  };
}
