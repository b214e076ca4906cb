//! The keys of "settings as code": `models[].settings` (the eight fields of the service's
//! settings object, with the spec's names), `model_defaults` (defaults of every per-model
//! key) and `settings_apply` (whether the daemon applies settings itself). The merging of
//! `model_defaults` into each model lives in model-defaults.ts.
import { z } from 'zod';
import { leaf, scalar, text } from './fields.js';
import type { RawProblem } from './problems.js';
import { Fail, parseDurationValue, show } from './units.js';

/** Largest value of an integer setting (a signed 32-bit integer), as `mls settings update` takes. */
export const MAX_SETTING_INT = 2_147_483_647;

/** The fields of the service's settings object, in the spec's order. */
export const SETTINGS_FIELDS = [
  'min_replica',
  'max_replica',
  'scale_down_delay',
  'inference_time',
  'is_dedicated',
  'machine_type',
  'container_concurrency',
  'is_input_output_enabled',
] as const;

/** One field of the settings object. */
export type SettingsField = (typeof SETTINGS_FIELDS)[number];

/** A value of a settings field, as sent. */
export type SettingsValue = number | boolean | string;

function count(description: string) {
  return scalar(z.number().int().min(0).max(MAX_SETTING_INT)).optional().describe(description);
}

const SECONDS_JSON = {
  anyOf: [
    { type: 'integer', minimum: 0, maximum: MAX_SETTING_INT },
    { type: 'string', pattern: '^(\\d+|(\\d+(\\.\\d+)?(ms|s|m|h|d))+)$' },
  ],
};

/** Whole seconds: an integer (`300`) or a duration of whole seconds (`5m`), sent as integer seconds. */
export function parseSecondsValue(v: unknown): number | Fail {
  const hint = 'write whole seconds such as 300, or a duration such as 90s or 5m';
  let seconds: number;
  if (typeof v === 'number' || (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v))) {
    seconds = Number(v);
  } else {
    const ms = parseDurationValue(v);
    if (ms instanceof Fail) return new Fail(`${ms.message.split(';')[0]}; ${hint}`);
    seconds = ms / 1000;
  }
  if (!Number.isInteger(seconds)) return new Fail(`${show(v)} is not a whole number of seconds; ${hint}`);
  if (seconds < 0) return new Fail(`${show(v)} is negative; ${hint}`);
  if (seconds > MAX_SETTING_INT) return new Fail(`${show(v)} is too large; the maximum is ${MAX_SETTING_INT} seconds`);
  return seconds;
}

function seconds(description: string) {
  return leaf<number>(`${description} Whole seconds, or a duration of whole seconds (\`90s\`, \`5m\`); sent as integer seconds.`, SECONDS_JSON, parseSecondsValue).optional();
}

/** The schema of `models[].settings` (and `model_defaults.settings`). */
export const settingsSchema = z
  .strictObject({
    min_replica: count('Minimum number of replicas of the model (integer ≥ 0; at most max_replica).'),
    max_replica: count('Maximum number of replicas of the model (integer ≥ 0).'),
    scale_down_delay: seconds('Delay before the model is scaled down.'),
    inference_time: seconds('Longest time the model may take for one inference request.'),
    is_dedicated: scalar(z.boolean().optional()).describe('true: the model runs on a dedicated machine; false: on a shared one.'),
    machine_type: text('Machine type of the model (the values the service accepts are its own).').optional(),
    container_concurrency: count('Concurrent requests one replica of the model handles (integer ≥ 0).'),
    is_input_output_enabled: scalar(z.boolean().optional()).describe('Whether input and output tracking is enabled for the model.'),
  })
  .describe(
    'Settings of the model on the service, applied by `mls settings apply` (only the fields that changed since mls last applied them are sent). Fields left out are not sent; removing a field does not change it on the service.',
  );

/** Parsed settings of one model: only the fields declared. */
export type ModelSettingsConfig = Partial<Record<SettingsField, SettingsValue>>;

/** The schema of `settings_apply`. */
export const settingsApplySchema = z
  .enum(['off', 'on_reload'])
  .default('off')
  .describe(
    '`on_reload`: the daemon applies pending model settings (as `mls settings apply` would) when it starts and at every SIGHUP reload, and logs each change. `off`: only `mls settings apply` sends settings.',
  );

/** A replica count as written, when it is a valid one (else its own problem is reported). */
function replicas(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * The settings checks that span fields, on the models as written after `model_defaults`
 * were merged (so they run even when other fields are broken): `min_replica` must not
 * exceed `max_replica`.
 */
export function checkModelSettings(models: unknown): RawProblem[] {
  const problems: RawProblem[] = [];
  if (!Array.isArray(models)) return problems;
  models.forEach((m: unknown, i) => {
    const s = (m as { settings?: unknown } | null)?.settings;
    if (s === null || typeof s !== 'object') return;
    const min = replicas((s as Record<string, unknown>).min_replica);
    const max = replicas((s as Record<string, unknown>).max_replica);
    if (min !== undefined && max !== undefined && min > max) {
      problems.push({
        path: ['models', i, 'settings', 'min_replica'],
        message: `${min} exceeds max_replica ${max} (after model_defaults are merged); lower min_replica or raise max_replica`,
      });
    }
  });
  return problems;
}
