//! `mls settings plan|apply|history --config F`: model settings declared in the config
//! (`models[].settings`, `model_defaults`), planned against what mls last applied (kept in
//! the state file), applied one request per model with only the fields that changed, and
//! the history of applies. Apply writes the state file: directly when no daemon runs,
//! through the running daemon's control socket otherwise.
import { existsSync } from 'node:fs';
import type { Config } from '../config/index.js';
import { ExitCode, MlsError, UsageError } from '../errors.js';
import { StateReader } from '../journal/reader.js';
import { StateStore, type AppliedFields } from '../journal/store.js';
import type { ApplySummary, ModelApplyResult } from '../settings/apply.js';
import { declaredSettings, planModel, type DeclaredModel, type ModelPlan } from '../settings/plan.js';
import { createLogger } from '../telemetry/logger.js';
import { registerSecret } from '../telemetry/secrets.js';
import { OutputWriter, type CommandIo } from './common.js';
import { loadConfig } from './config.js';
import { formatHistory, formatPlan, formatResult, formatSummary, planJson } from './settings-output.js';
import { writeState } from './state-writer.js';

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

/** What mls last applied, read without disturbing a running daemon; nothing when there is no state file yet. */
function readApplied(statePath: string): Map<string, AppliedFields> {
  if (!existsSync(statePath)) return new Map();
  const reader = StateReader.open(statePath);
  try {
    return reader.settings.appliedAll();
  } finally {
    reader.close();
  }
}

function plansOf(config: Config, opts: SelectOptions & { all?: boolean }): ModelPlan[] {
  const applied = readApplied(config.state.path);
  return selectModels(config, opts.model).map((m) => planModel(m, applied.get(m.modelId) ?? {}, { all: opts.all }));
}

async function write(io: CommandIo, text: string): Promise<void> {
  const out = new OutputWriter(io.stdout);
  try {
    await out.write(text);
  } finally {
    out.release();
  }
}

/** Runs `mls settings plan`. */
export async function runPlan(opts: SelectOptions & { all?: boolean; json?: boolean; detailedExitcode?: boolean }, io: CommandIo): Promise<void> {
  const config = await loadConfig(opts.config, io.env);
  const plans = plansOf(config, opts);
  await write(io, opts.json ? planJson(plans) : formatPlan(plans));
  if (opts.detailedExitcode) io.setExitCode(plans.some((p) => p.changes.length > 0) ? ExitCode.pending : ExitCode.ok);
}

/** Runs `mls settings apply`. Failures of some models are reported after the others were tried. */
export async function runApply(opts: SelectOptions & { all?: boolean; dryRun?: boolean; recordOnly?: boolean }, io: CommandIo): Promise<void> {
  if (opts.dryRun && opts.recordOnly) throw new UsageError('--dry-run and --record-only exclude each other; give one');
  const config = await loadConfig(opts.config, io.env);
  registerSecret(config.api.token);
  if (opts.dryRun) {
    await write(io, formatPlan(plansOf(config, opts), { dryRun: true }));
    return;
  }
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
  const [{ createApiClient }, { clientOptions }, { applySettings }, { Metrics }] = await Promise.all([
    import('../api/client.js'),
    import('../daemon/wiring.js'),
    import('../settings/apply.js'),
    import('../telemetry/metrics.js'),
  ]);
  const store = StateStore.open(config.state.path);
  const client = createApiClient(clientOptions(config, new Metrics({ processMetrics: false }), createLogger({ level: 'warn' }).child({ component: 'api' })));
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
  let rows: ReturnType<StateReader['settings']['history']> = [];
  if (existsSync(config.state.path)) {
    const reader = StateReader.open(config.state.path);
    try {
      rows = reader.settings.history(opts.model, 100_000);
    } finally {
      reader.close();
    }
  }
  await write(io, opts.json ? `${JSON.stringify(rows.map((r) => ({ time: new Date(r.atMs).toISOString(), model_id: r.modelId, outcome: r.outcome, fields: r.fields, details: r.details })), null, 2)}\n` : formatHistory(rows));
}
