//! The stdout sink as a sink type.
import { defineSink } from '../definition.js';
import { stdoutSinkSchema, type StdoutSinkConfig } from './config.js';

/** The `stdout` sink type. */
export const stdoutSink = defineSink<StdoutSinkConfig>({
  type: 'stdout',
  schema: stdoutSinkSchema,
  async create(config, context) {
    const { createStdoutSink } = await import('./index.js');
    return createStdoutSink(config, context);
  },
});
