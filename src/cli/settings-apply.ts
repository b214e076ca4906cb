//! What `mls settings` does. `update`: the settings given on the command line, sent to one
//! model. `plan|apply|history --config F`: model settings declared in the config
//! (`models[].settings`, `model_defaults`), planned against what mls last applied (kept in
//! the state file), applied one request per model with only the fields that changed, and
//! the history of applies. Apply writes the state file: directly when no daemon runs,
//! through the running daemon's control socket otherwise.
import type { ModelSettings } from '../api/types.js';
import { Fail, MAX_SETTING_INT, type Config } from '../config/index.js';
import { parseSecondsValue } from '../config/settings-fields.js';
import { ExitCode, MlsError, UsageError } from '../errors.js';
import { readStateFile } from '../journal/reader.js';
import { StateStore, type AppliedFields } from '../journal/store.js';
import type { ApplySummary, ModelApplyResult } from '../settings/apply.js';
import { declaredSettings, planModel, type DeclaredModel, type ModelPlan } from '../settings/plan.js';
import { OutputWriter, refuseTokenFlag, resolveConnection, writeOutput, type CommandIo } from './common.js';
import { configClientOptions, loadConfig } from './config.js';
import { formatHistory, formatPlan, formatResult, formatSummary, planJson } from './settings-output.js';
import { writeState } from './state-writer.js';
import type { SettingsUpdateCliOptions } from './settings.js';

/** The options every settings-as-code command takes. */
export interface SelectOptions {
  config: string;
  model: string[];
}

/** The declared settings of the models asked for (all without `--model`). */
function selectModels(config: Config, only: readonly string[]): DeclaredModel[] {
  const declared = declaredSettings(config.models);
  for (const id of only) {
    if (!declared.some((d) => d.modelId === id)) {
      throw new UsageError(`--model ${id}: no such model in the config (models: ${declared.map((d) => d.modelId).join(', ')})`);
    }
  }
  return only.length === 0 ? declared : declared.filter((d) => only.includes(d.modelId));
}

/** The plans of the models asked for, against what mls last applied (read without disturbing a running daemon; nothing without a state file yet). */
function plansOf(config: Config, opts: SelectOptions & { all?: boolean }): ModelPlan[] {
  const applied = readStateFile(config.state.path, (reader) => reader.settings.appliedAll()) ?? new Map<string, AppliedFields>();
  return selectModels(config, opts.model).map((m) => planModel(m, applied.get(m.modelId) ?? {}, { all: opts.all }));
}

/** Runs `mls settings plan`. */
export async function runPlan(opts: SelectOptions & { all?: boolean; json?: boolean; detailedExitcode?: boolean }, io: CommandIo): Promise<void> {
  const config = await loadConfig(opts.config, io.env);
  const plans = plansOf(config, opts);
  await writeOutput(io.stdout, opts.json ? planJson(plans) : formatPlan(plans));
  if (opts.detailedExitcode) io.setExitCode(plans.some((p) => p.changes.length > 0) ? ExitCode.pending : ExitCode.ok);
}

/** Runs `mls settings apply`. Failures of some models are reported after the others were tried. */
export async function runApply(opts: SelectOptions & { all?: boolean; dryRun?: boolean; recordOnly?: boolean }, io: CommandIo): Promise<void> {
  if (opts.dryRun && opts.recordOnly) throw new UsageError('--dry-run and --record-only exclude each other; give one');
  const config = await loadConfig(opts.config, io.env);
  if (opts.dryRun) return writeOutput(io.stdout, formatPlan(plansOf(config, opts), { dryRun: true }));
  const declared = selectModels(config, opts.model);
  const out = new OutputWriter(io.stdout);
  // Lines are written as results come; a reader that went away does not stop the apply.
  const print = (r: ModelApplyResult) => void out.write(formatResult(r)).catch(() => undefined);
  let summary: ApplySummary;
  try {
    summary = await writeState(config.state.path, {
      direct: () => applyDirectly(config, declared, opts, print),
      viaDaemon: async (daemon) =>
        (await daemon.request('settings.apply', { baseUrl: config.api.base_url, declared, all: opts.all === true, recordOnly: opts.recordOnly === true }, (e) =>
          print(e as ModelApplyResult),
        )) as ApplySummary,
    });
    await out.write(formatSummary(summary));
  } finally {
    out.release();
  }
  if (summary.failed.length > 0) {
    const why = summary.results.filter((r) => r.outcome === 'failed').map((r) => `${r.modelId} (${r.error?.message ?? 'failed'})`);
    throw new MlsError(
      summary.results.find((r) => r.error)?.error?.code ?? 'MLS_ERR_API_UNAVAILABLE',
      `settings not applied for ${summary.failed.length} model${summary.failed.length === 1 ? '' : 's'}: ${why.join('; ')}; run 'mls settings apply' again to send them`,
      { exitCode: (summary.exitCode || ExitCode.failure) as ExitCode },
    );
  }
}

async function applyDirectly(config: Config, declared: DeclaredModel[], opts: { all?: boolean; recordOnly?: boolean }, onResult: (r: ModelApplyResult) => void): Promise<ApplySummary> {
  // Loaded here, not with the command's definition: every `mls` command starts faster.
  const [{ createApiClient }, { applySettings }] = await Promise.all([import('../api/client.js'), import('../settings/apply.js')]);
  const store = StateStore.open(config.state.path);
  const client = createApiClient(await configClientOptions(config));
  try {
    return await applySettings({ declared, all: opts.all, recordOnly: opts.recordOnly }, { client, state: store.settings, onResult });
  } finally {
    await client.close();
    store.close();
  }
}

/** Runs `mls settings history`. */
export async function runHistory(opts: { config: string; model?: string; json?: boolean }, io: CommandIo): Promise<void> {
  const config = await loadConfig(opts.config, io.env);
  const rows = readStateFile(config.state.path, (reader) => reader.settings.history(opts.model, 100_000)) ?? [];
  await writeOutput(io.stdout, opts.json ? `${JSON.stringify(rows.map((r) => ({ time: new Date(r.atMs).toISOString(), model_id: r.modelId, outcome: r.outcome, fields: r.fields, details: r.details })), null, 2)}\n` : formatHistory(rows));
}

function integer(flag: string, text: string): number {
  const s = text.trim();
  if (!/^\d+$/.test(s)) {
    const what = /^-\d+$/.test(s) ? 'a negative number' : JSON.stringify(text);
    throw new UsageError(`${flag}: expected a non-negative integer, got ${what}`);
  }
  const n = Number(s);
  if (n > MAX_SETTING_INT) throw new UsageError(`${flag}: ${s} is too large (at most ${MAX_SETTING_INT})`);
  return n;
}

/** Whole seconds, from `90` or a duration such as `90s` or `5m`, as the config takes them. */
function seconds(flag: string, text: string): number {
  const s = parseSecondsValue(text);
  if (s instanceof Fail) throw new UsageError(`${flag}: ${s.message}`);
  return s;
}

/**
 * Builds the `data` object from the options, refusing an empty update, malformed or
 * negative numbers, `min > max` and contradictory flags.
 * @throws UsageError naming the option at fault.
 */
function buildSettings(opts: SettingsUpdateCliOptions): ModelSettings {
  const data: ModelSettings = {};
  if (opts.minReplica !== undefined) data.min_replica = integer('--min-replica', opts.minReplica);
  if (opts.maxReplica !== undefined) data.max_replica = integer('--max-replica', opts.maxReplica);
  if (data.min_replica !== undefined && data.max_replica !== undefined && data.min_replica > data.max_replica) {
    throw new UsageError(`--min-replica (${data.min_replica}) must not exceed --max-replica (${data.max_replica})`);
  }
  if (opts.scaleDownDelay !== undefined) data.scale_down_delay = seconds('--scale-down-delay', opts.scaleDownDelay);
  if (opts.inferenceTime !== undefined) data.inference_time = seconds('--inference-time', opts.inferenceTime);
  if (opts.dedicated && opts.shared) throw new UsageError('--dedicated and --shared exclude each other; give one');
  if (opts.dedicated) data.is_dedicated = true;
  if (opts.shared) data.is_dedicated = false;
  if (opts.machineType !== undefined) {
    const t = opts.machineType.trim();
    if (t === '') throw new UsageError('--machine-type: expected a machine type, got an empty value');
    data.machine_type = t;
  }
  if (opts.containerConcurrency !== undefined) data.container_concurrency = integer('--container-concurrency', opts.containerConcurrency);
  if (opts.ioTracking !== undefined) data.is_input_output_enabled = opts.ioTracking;
  if (Object.keys(data).length === 0) {
    throw new UsageError('nothing to update: give at least one setting, e.g. --min-replica 1 (see mls settings update --help)');
  }
  return data;
}

/** Runs `mls settings update` with parsed options. Failures are thrown. */
export async function runSettingsUpdate(opts: SettingsUpdateCliOptions, io: CommandIo): Promise<void> {
  refuseTokenFlag(opts);
  const modelId = opts.model.trim();
  if (modelId === '') throw new UsageError('--model: expected a model id');
  const data = buildSettings(opts);
  if (opts.dryRun) return writeOutput(io.stdout, `${JSON.stringify({ model_id: modelId, data }, null, 2)}\n`);
  const client = (await import('../api/client.js')).createApiClient((await resolveConnection(opts, io.env)).api);
  try {
    await writeOutput(io.stdout, `${(await client.updateSettings(modelId, data)).details}\n`);
  } finally {
    await client.close();
  }
}
