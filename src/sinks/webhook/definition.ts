//! The webhook sink as a sink type: the only one that sends several batches at once.
import { defineSink } from '../definition.js';
import { webhookSinkSchema, type WebhookSinkConfig } from './config.js';

/** The `webhook` sink type. */
export const webhookSink = defineSink<WebhookSinkConfig>({
  type: 'webhook',
  schema: webhookSinkSchema,
  concurrency: (config) => config.concurrency,
  stepBoundMs: (config) => config.timeout,
  async create(config, context) {
    const { createWebhookSink } = await import('./index.js');
    return createWebhookSink(config, context);
  },
});
