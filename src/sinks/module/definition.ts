//! Sinks loaded from a JavaScript module, as a sink type.
import { defineSink } from '../definition.js';
import { moduleSinkSchema, type ModuleSinkConfig } from './config.js';
import { buildModuleSink } from './index.js';

/** The `module` sink type. */
export const moduleSink = defineSink<ModuleSinkConfig>({
  type: 'module',
  schema: moduleSinkSchema,
  sendTimeoutMs: (config) => config.timeout,
  stepBoundMs: (config) => config.timeout,
  create: (config, context) => buildModuleSink(config.path, config.options ?? {}, context, config.timeout),
});
