//! Applying "settings as code": each model is sent only its changed fields, in one request,
//! and what was applied is recorded after each success. A failure (an error answer, or a
//! timeout after the request was sent: either way the change may not have been applied)
//! is recorded in the history only, so the next apply sends those fields again; the other
//! models go on.
import type { ApiClient, ModelSettings } from '../api/types.js';
import { ExitCode, MlsError, describeError } from '../errors.js';
import type { AppliedSettings } from '../journal/applied-settings.js';
import type { AppliedFields, SettingsOutcome } from '../journal/store.js';
import { scrubSecrets } from '../telemetry/secrets.js';
import { dataOf, planModel, type DeclaredModel } from './plan.js';

/** How one model's apply ended: a history outcome, or nothing to send. */
export type ApplyOutcome = SettingsOutcome | 'unchanged' | 'undeclared';

/** The result of one model's apply. */
export interface ModelApplyResult {
  modelId: string;
  outcome: ApplyOutcome;
  /** The fields sent (or recorded); empty when nothing was. */
  fields: AppliedFields;
  /** The service's `details` (applied), or what happened. */
  details?: string;
  /** What failed (outcome `failed`), with the exit code it maps to. */
  error?: { code: string; message: string; exitCode: number };
}

/** The result of an apply. */
export interface ApplySummary {
  results: ModelApplyResult[];
  /** The models whose settings were not applied. */
  failed: string[];
  /** 0, or the exit code of the first failure (3: token refused, 4: service error, …). */
  exitCode: number;
}

/** What an apply is asked to do. */
export interface ApplyRequest {
  /** The declared settings, in the order to apply them. */
  declared: readonly DeclaredModel[];
  /** Send every declared field, not only those that changed. */
  all?: boolean;
  /** Record the declared values as applied without sending them (adopt settings in place). */
  recordOnly?: boolean;
}

/** What an apply uses. */
export interface ApplyDeps {
  client: Pick<ApiClient, 'updateSettings'>;
  /** The part of the state file an apply reads and writes. */
  state: Pick<AppliedSettings, 'applied' | 'record'>;
  /** Stops the apply: the request in flight counts as not applied, later models are not sent. */
  signal?: AbortSignal;
  /** Called with each model's result as soon as it is known. */
  onResult?(result: ModelApplyResult): void;
}

/** Detail recorded for `--record-only`. */
export const RECORD_ONLY_DETAILS = 'recorded as applied without sending (--record-only)';

/** Applies `req`, one model after the other. */
export async function applySettings(req: ApplyRequest, deps: ApplyDeps): Promise<ApplySummary> {
  const results: ModelApplyResult[] = [];
  let exitCode = 0;
  for (const model of req.declared) {
    const result = await applyModel(model, req, deps);
    if (result.error && exitCode === 0) exitCode = result.error.exitCode;
    results.push(result);
    deps.onResult?.(result);
  }
  return { results, failed: results.filter((r) => r.outcome === 'failed').map((r) => r.modelId), exitCode };
}

async function applyModel(model: DeclaredModel, req: ApplyRequest, deps: ApplyDeps): Promise<ModelApplyResult> {
  const plan = planModel(model, deps.state.applied(model.modelId), { all: req.all });
  const { modelId } = model;
  if (plan.changes.length === 0) return { modelId, outcome: plan.declared ? 'unchanged' : 'undeclared', fields: {} };
  const fields = dataOf(plan) as AppliedFields;
  if (req.recordOnly) {
    deps.state.record(modelId, fields, 'recorded', RECORD_ONLY_DETAILS);
    return { modelId, outcome: 'recorded', fields, details: RECORD_ONLY_DETAILS };
  }
  if (deps.signal?.aborted) {
    const error = { code: 'MLS_ERR_STOPPED', message: 'not sent: mls is stopping', exitCode: ExitCode.failure };
    return { modelId, outcome: 'failed', fields, error };
  }
  let details: string;
  try {
    details = scrubSecrets((await deps.client.updateSettings(modelId, fields as ModelSettings, deps.signal)).details);
  } catch (err) {
    const message = scrubSecrets(describeError(err));
    const error = err instanceof MlsError ? { code: err.code, message, exitCode: err.exitCode } : { code: 'MLS_ERR_UNEXPECTED', message, exitCode: ExitCode.failure };
    deps.state.record(modelId, fields, 'failed', message);
    return { modelId, outcome: 'failed', fields, error };
  }
  // A state file that cannot record this throws: the apply stops, and the next one sends
  // these fields again (the same values, so the service ends up as declared).
  deps.state.record(modelId, fields, 'applied', details);
  return { modelId, outcome: 'applied', fields, details };
}
