//! What a sink type brings: the schema of its config block (whose marks say which fields
//! are secrets and which are paths), the keys it adds to `models[]`, the checks that span
//! its fields or its blocks, its delivery concurrency, and its factory. Each sink folder
//! exports one; the registry lists them.
import type { z } from 'zod';
import type { ModelConfig, RawProblem, SinkBlock, SinkSchema } from '../config/index.js';
import type { Sink, SinkContext } from './contract.js';

/** What sinks may need from the rest of the config. */
export interface SinkEnvironment {
  /** The configured models, with the keys sink types add to them (e.g. OTLP's `resource`). */
  models?: readonly ModelConfig[];
}

/** A parsed block of one sink type, with its place in `sinks`. */
export interface PlacedBlock<C> {
  /** Position in `sinks`. */
  index: number;
  config: C;
}

/** A sink type. `C` is its parsed config block. */
export interface SinkDefinition<C extends SinkBlock = SinkBlock> {
  /** The `type` of its blocks. */
  readonly type: C['type'];
  /**
   * The schema of its blocks: a strict object whose `type` is a literal, made of
   * `sinkFields(…)` and the config's building blocks (`secret`, `secretHeaders` and
   * `filePath` mark their fields, so the loader scrubs and resolves them).
   */
  readonly schema: SinkSchema;
  /** Keys it adds to every entry of `models` (e.g. OTLP's `resource`). */
  readonly modelKeys?: Readonly<Record<string, z.ZodType>>;
  /** Checks of one block as written that span several of its fields; paths below the block. */
  check?(block: Record<string, unknown>): RawProblem[];
  /** Checks of its parsed blocks taken together, paths resolved; paths from the top of the file. */
  validate?(blocks: ReadonlyArray<PlacedBlock<C>>, models: readonly ModelConfig[]): RawProblem[];
  /** Batches its delivery loop may have in flight at once. One when absent. */
  concurrency?(config: C): number;
  /**
   * How long one send may take before the delivery loop fires its signal and counts a retry;
   * absent for sinks that bound their own sends (their requests carry a timeout).
   */
  sendTimeoutMs?(config: C): number;
  /** How long a stop, flush or close of it may take at a reload or shutdown; 30 s when absent. */
  stepBoundMs?(config: C): number;
  /**
   * Builds a sink. With `context.checkOnly` the sink is only asked for its `healthcheck()`
   * and closed: it must take no state and write nothing.
   */
  create(config: C, context: SinkContext, env: SinkEnvironment): Promise<Sink> | Sink;
}

/** Types a sink definition against its config block. */
export function defineSink<C extends SinkBlock>(definition: SinkDefinition<C>): SinkDefinition<C> {
  return definition;
}
