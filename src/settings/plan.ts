//! The plan of "settings as code": for each model, the declared settings (config, after
//! `model_defaults`) that differ from what mls last applied successfully. The service
//! cannot be read back, so a change made elsewhere (its console) is not seen here.
import { SETTINGS_FIELDS, type ModelConfig, type ModelSettingsConfig, type SettingsField, type SettingsValue } from '../config/index.js';
import type { AppliedFields } from '../journal/store.js';

/** A model and the settings its config declares. */
export interface DeclaredModel {
  modelId: string;
  /** The declared fields; empty when the model declares none. */
  settings: ModelSettingsConfig;
}

/** One field an apply would send. */
export interface FieldChange {
  field: SettingsField;
  /** The value mls last applied; undefined when it never applied this field. */
  from: SettingsValue | undefined;
  to: SettingsValue;
}

/** What an apply would send to one model. */
export interface ModelPlan {
  modelId: string;
  /** Whether the model declares any settings. */
  declared: boolean;
  /** The fields to send, in the spec's order; empty when the model is up to date. */
  changes: FieldChange[];
}

/** The declared settings of `models`, in config order. */
export function declaredSettings(models: readonly Pick<ModelConfig, 'id' | 'settings'>[]): DeclaredModel[] {
  return models.map((m) => ({ modelId: m.id, settings: { ...(m.settings ?? {}) } }));
}

/**
 * The plan of one model: the declared fields whose value differs from the one last
 * applied (every declared field with `all`).
 */
export function planModel(model: DeclaredModel, applied: AppliedFields, options: { all?: boolean } = {}): ModelPlan {
  const changes: FieldChange[] = [];
  for (const field of SETTINGS_FIELDS) {
    const to = model.settings[field];
    if (to === undefined) continue;
    const from = applied[field];
    if (options.all || from !== to) changes.push({ field, from, to });
  }
  return { modelId: model.modelId, declared: changes.length > 0 || Object.keys(model.settings).length > 0, changes };
}

/** The `data` object that sends a plan's changes. */
export function dataOf(plan: ModelPlan): ModelSettingsConfig {
  return Object.fromEntries(plan.changes.map((c) => [c.field, c.to]));
}
