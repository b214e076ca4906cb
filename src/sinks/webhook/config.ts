//! The webhook sink's config block.
import { z } from 'zod';
import { duration, filePath, httpUrl, proxyUrl, scalar, secret, secretHeaders, sinkFields, REQUEST_BATCHES, SINK_CREDENTIALS } from '../../config/index.js';

/** The schema of a `type: webhook` block. */
export const webhookSinkSchema = z
  .strictObject({
    type: z.literal('webhook').describe('POSTs batches to an HTTP endpoint.'),
    ...sinkFields(REQUEST_BATCHES),
    url: httpUrl('URL the batches are POSTed to.', { credentials: SINK_CREDENTIALS }),
    format: z.enum(['ndjson', 'json']).default('ndjson').describe('Body format: one JSON object per line (`ndjson`) or one JSON array (`json`).'),
    compression: z.enum(['none', 'gzip']).default('none').describe('Compression of the request body.'),
    headers: secretHeaders('Extra request headers (values are treated as secrets).').prefault({}),
    timeout: duration('Time allowed for one request.', { positive: true }).prefault('30s'),
    concurrency: scalar(z.number().int().min(1).default(1)).describe('Requests in flight at once for this sink. Above 1, batches may arrive out of order.'),
    signing_secret: secret('When set, each request carries an HMAC-SHA256 signature of its body made with this secret.').optional(),
    ca_file: filePath("PEM file of extra certificate authorities to trust for this endpoint, besides Node's default ones (its bundled roots and NODE_EXTRA_CA_CERTS).").optional(),
    proxy: proxyUrl(
      'Proxy for this endpoint: an http:// or https:// URL, credentials allowed (treated as a secret), or `none` to connect directly. Without it, HTTP_PROXY, HTTPS_PROXY and NO_PROXY apply.',
    ).optional(),
  })
  .describe('Webhook sink.');

/** A `type: webhook` sink block, parsed. */
export type WebhookSinkConfig = z.output<typeof webhookSinkSchema>;

declare module '../../config/schema.js' {
  interface SinkConfigs {
    webhook: WebhookSinkConfig;
  }
}
