//! The configuration of this build: the config sections joined with the sink types of the
//! registry (their schemas, the keys they add to models, their checks). The commands load
//! their config here; `config/mls.schema.json` is generated from the same schema.
import type { z } from 'zod';
import type { ApiClientOptions } from '../api/client-options.js';
import { buildConfigSchema, ConfigLoader, type Config, type ParseConfigOptions, type SinkConfig } from '../config/index.js';
import { sinkRegistry, type SinkRegistry } from '../sinks/registry.js';

/** A loader for configs whose sinks are of the types in `registry`. */
export function configLoader(registry: SinkRegistry = sinkRegistry): ConfigLoader {
  return new ConfigLoader({
    schema: buildConfigSchema(registry.schemas(), registry.modelKeys()),
    checkSink: (block) => registry.checkBlock(block),
    validate: (config) => registry.validate(config),
  });
}

const loader = configLoader();

/** The schema of one entry of `sinks`, any built-in type. */
export const sinkSchema = loader.schema.shape.sinks.element as unknown as z.ZodType<SinkConfig, unknown>;

/**
 * Reads, interpolates and validates the YAML config file at `file`, resolving relative
 * paths against its directory. Returns the deeply frozen config; throws a ConfigError
 * listing every problem.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env, options: Pick<ParseConfigOptions, 'noEnv' | 'onStandIns'> = {}): Promise<Config> {
  return loader.load(file, env, options);
}

/** The options of the service client the daemon would make from `config`; the client's warnings go to stderr. */
export async function configClientOptions(config: Config): Promise<ApiClientOptions> {
  const [{ clientOptions }, { Metrics }, { createLogger }] = await Promise.all([import('../daemon/wiring.js'), import('../telemetry/metrics.js'), import('../telemetry/logger.js')]);
  return clientOptions(config, new Metrics({ processMetrics: false }), createLogger({ level: 'warn' }).child({ component: 'api' }));
}

/** Validates an in-memory configuration (as parsed from YAML); see {@link ConfigLoader.parse}. */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): Config {
  return loader.parse(raw, options);
}

/** The JSON Schema (draft 2020-12) of the YAML file; written to config/mls.schema.json. */
export function configJsonSchema(): Record<string, unknown> {
  return loader.jsonSchema();
}
