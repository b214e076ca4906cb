//! The configuration: schema, loader and the parsed types, in one import.
export {
  configSchema,
  modelSchema,
  sinkSchema,
  configJsonSchema,
  type Config,
  type ApiConfig,
  type ModelConfig,
  type SinkConfig,
  type SinkType,
  type FileSinkConfig,
  type StdoutSinkConfig,
  type WebhookSinkConfig,
  type OtlpSinkConfig,
  type ModuleSinkConfig,
  type LogLevel,
  type SeverityText,
} from './schema.js';
export { loadConfig, parseConfig, parseYaml, configSecrets, deepFreeze, TOKEN_ENV, TOKEN_CREDENTIAL, type ParseConfigOptions } from './load.js';
export { parseListen, type ListenAddress, type RateLimit, type StartAt } from './units.js';
