//! The OTLP sink as a sink type: its block, the `resource` it adds to models, the check of
//! its client certificate pair, and its factory (which loads the exporters only when used).
import { defineSink } from '../definition.js';
import { checkOtlpBlock, otlpModelKeys, otlpSinkSchema, type OtlpSinkConfig } from './config.js';

/** The `otlp` sink type. */
export const otlpSink = defineSink<OtlpSinkConfig>({
  type: 'otlp',
  schema: otlpSinkSchema,
  modelKeys: otlpModelKeys,
  check: checkOtlpBlock,
  stepBoundMs: (config) => config.timeout,
  async create(config, context, env) {
    const { createOtlpSink } = await import('./index.js');
    const modelResources = new Map((env.models ?? []).map((m) => [m.id, m.resource]));
    return createOtlpSink(config, context, { modelResources });
  },
});
