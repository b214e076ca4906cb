//! The configuration, knowing no sink: the sections' schema, the building blocks sink types
//! make their schemas from, the loader, and the parsed types. The sink types a build has
//! are joined to it by the command line (`cli/config.ts`).
export {
  buildConfigSchema,
  type SinkSchema,
  type Config,
  type ModelConfig,
  type ModelKeys,
  type SinkConfig,
  type SinkConfigs,
} from './schema.js';
export { ConfigLoader, parseYaml, type ParseConfigOptions, type StandIns } from './load.js';
export { TOKEN_CREDENTIAL } from './token.js';
export { duration, filePath, httpUrl, leaf, proxyUrl, scalar, secret, secretHeaders, size, stringMap, text, SINK_CREDENTIALS } from './fields.js';
export { sinkFields, REQUEST_BATCHES, WRITE_BATCHES, type SinkBlock } from './sink-block.js';
export { mark, markedFields } from './marks.js';
export { formatProblem, type RawProblem } from './problems.js';
export { Fail, show, parseFileModeValue, parseListen, type RateLimit, type StartAt } from './units.js';
export {
  SETTINGS_FIELDS,
  MAX_SETTING_INT,
  settingsSchema,
  checkModelSettings,
  type SettingsField,
  type SettingsValue,
  type ModelSettingsConfig,
} from './settings-fields.js';
