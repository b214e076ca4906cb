//! `mls_model_log_records_total{model,level}` and `mls_model_exceptions_total{model,type}`:
//! each model's records counted once, by the first sink of the config (in order) that
//! processes the model's lines, before its filter. Sinks with processing make the same records
//! of the same lines, so one of them counts.
import type { Config } from '../config/index.js';
import type { RecordMeter } from '../delivery/processing/stage.js';
import type { Level } from '../processing/types.js';
import type { Metrics } from '../telemetry/metrics.js';

/** The `type` of exceptions past a model's first `processing.exceptions.max_types_per_model` types. */
export const OTHER_EXCEPTION_TYPE = 'other';

/** The daemon's records meter. */
export class RecordsMeter implements RecordMeter {
  #config: Config | undefined;
  #owners = new Map<string, string>();
  /** The exception types each model has a series of: the first ones met, up to the limit. */
  readonly #types = new Map<string, Set<string>>();

  constructor(
    private readonly metrics: Metrics,
    private readonly config: () => Config,
  ) {}

  counts(sink: string, modelId: string): boolean {
    return this.owners().get(modelId) === sink;
  }

  record(modelId: string, level: Level | undefined, n: number): void {
    this.metrics.modelRecords.inc({ model: modelId, level: level ?? 'unknown' }, n);
  }

  exception(modelId: string, type: string, n: number): void {
    let types = this.#types.get(modelId);
    if (types === undefined) this.#types.set(modelId, (types = new Set()));
    if (!types.has(type)) {
      const processing = this.config().processing;
      // Type names come from log text: bounded per model, as a label must be.
      if (processing === false || processing === 'off' || types.size >= processing.exceptions.max_types_per_model) type = OTHER_EXCEPTION_TYPE;
      else types.add(type);
    }
    this.metrics.modelExceptions.inc({ model: modelId, type }, n);
  }

  /** The counting sink of each model, worked out again when the config changes. */
  private owners(): Map<string, string> {
    const config = this.config();
    if (config === this.#config) return this.#owners;
    this.#config = config;
    this.#owners = new Map();
    if (config.processing === false || config.processing === 'off') return this.#owners;
    for (const model of config.models) {
      const sink = config.sinks.find((s) => !s.raw && (s.models === undefined || s.models.includes(model.id)));
      // No series at 0 per model: with thousands of models they would cost memory for nothing.
      if (sink !== undefined) this.#owners.set(model.id, sink.name);
    }
    return this.#owners;
  }
}
