//! The sink types of this build, and what the rest of the program asks of them: their
//! schemas and model keys for the config, the checks they add to it, the concurrency of
//! their delivery, and building a running sink from a block. A sink type is a folder of
//! its own; adding one is one more entry in `BUILTIN_SINKS`.
import type { z } from 'zod';
import type { ModelConfig, RawProblem, SinkBlock, SinkSchema } from '../config/index.js';
import type { Sink, SinkContext } from './contract.js';
import type { PlacedBlock, SinkDefinition, SinkEnvironment } from './definition.js';
import { fileSink } from './file/definition.js';
import { moduleSink } from './module/definition.js';
import { otlpSink } from './otlp/definition.js';
import { stdoutSink } from './stdout/definition.js';
import { webhookSink } from './webhook/definition.js';

export type { SinkEnvironment } from './definition.js';

/** The bound of a stop, flush or close of a sink type that names none (file, stdout). */
const DEFAULT_STEP_BOUND_MS = 30_000;

/** The built-in sink types, in the order the config schema lists them. */
export const BUILTIN_SINKS: readonly SinkDefinition[] = [fileSink, stdoutSink, webhookSink, otlpSink, moduleSink];

/** A set of sink types, told apart by `type`. */
export class SinkRegistry {
  readonly #types = new Map<string, SinkDefinition>();

  /** Throws when two definitions share a `type` or add the same model key. */
  constructor(definitions: readonly SinkDefinition[]) {
    const modelKeys = new Map<string, string>();
    for (const d of definitions) {
      if (this.#types.has(d.type)) throw new Error(`bug: two sink types are named ${d.type}`);
      this.#types.set(d.type, d);
      for (const key of Object.keys(d.modelKeys ?? {})) {
        const other = modelKeys.get(key);
        if (other !== undefined) throw new Error(`bug: sink types ${other} and ${d.type} both add models[].${key}`);
        modelKeys.set(key, d.type);
      }
    }
  }

  /** This registry's types followed by `more`. */
  with(...more: SinkDefinition[]): SinkRegistry {
    return new SinkRegistry([...this.#types.values(), ...more]);
  }

  /** The schema of each type's blocks, in order. */
  schemas(): SinkSchema[] {
    return [...this.#types.values()].map((d) => d.schema);
  }

  /** The keys the types add to every entry of `models`. */
  modelKeys(): Record<string, z.ZodType> {
    return Object.assign({}, ...[...this.#types.values()].map((d) => d.modelKeys ?? {})) as Record<string, z.ZodType>;
  }

  /** The checks its type makes of one block as written (none for an unknown type, which the schema reports). */
  checkBlock(block: Record<string, unknown>): RawProblem[] {
    const d = typeof block.type === 'string' ? this.#types.get(block.type) : undefined;
    return d?.check?.(block) ?? [];
  }

  /** The checks each type makes of its parsed blocks taken together. */
  validate(config: { sinks: readonly SinkBlock[]; models: readonly ModelConfig[] }): RawProblem[] {
    return [...this.#types.values()].flatMap((d) => {
      const blocks: PlacedBlock<SinkBlock>[] = config.sinks.flatMap((sc, index) => (sc.type === d.type ? [{ index, config: sc }] : []));
      return d.validate !== undefined && blocks.length > 0 ? d.validate(blocks, config.models) : [];
    });
  }

  /** How many batches the delivery loop of `sc` may have in flight at once. */
  deliveryConcurrency(sc: SinkBlock): number {
    return Math.max(1, this.#definition(sc).concurrency?.(sc) ?? 1);
  }

  /** The bound the delivery loop puts on one send of `sc`, if its type asks for one. */
  sendTimeoutMs(sc: SinkBlock): number | undefined {
    return this.#definition(sc).sendTimeoutMs?.(sc);
  }

  /** How long a stop, flush or close of `sc` may take. */
  stepBoundMs(sc: SinkBlock): number {
    return this.#definition(sc).stepBoundMs?.(sc) ?? DEFAULT_STEP_BOUND_MS;
  }

  /** Builds the sink that `config` describes (a module sink's module imported from its resolved path). */
  async build(config: SinkBlock, context: SinkContext, env: SinkEnvironment = {}): Promise<Sink> {
    return this.#definition(config).create(config, context, env);
  }

  #definition(sc: SinkBlock): SinkDefinition {
    const d = this.#types.get(sc.type);
    if (d === undefined) throw new Error(`bug: sink ${sc.name} has the unknown type ${sc.type}`);
    return d;
  }
}

/** The sink types of this build. */
export const sinkRegistry = new SinkRegistry(BUILTIN_SINKS);
