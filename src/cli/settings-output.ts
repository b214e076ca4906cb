//! What `mls settings plan`, `apply` and `history` print: one block or line per model,
//! values as JSON (`machine_type="gpu-a10"`), and a plan for scripts (`--json`).
import type { SettingsHistoryEntry } from '../journal/store.js';
import { textTable } from './common.js';
import type { ApplySummary, ModelApplyResult } from '../settings/apply.js';
import { dataOf, type ModelPlan } from '../settings/plan.js';

/** `field=value …` of a set of fields. */
export function formatFields(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(' ');
}

/** Why a plan cannot see changes made elsewhere, printed under every plan. */
export const PLAN_NOTE = "(mls compares the config with what it last applied; changes made elsewhere, such as the service's console, are not seen)";

/** The plan as text. */
export function formatPlan(plans: readonly ModelPlan[], options: { dryRun?: boolean } = {}): string {
  const lines = plans.flatMap((p) => {
    if (!p.declared) return [`${p.modelId}: no settings declared`];
    if (p.changes.length === 0) return [`${p.modelId}: up to date`];
    return [`${p.modelId}: ${p.changes.length} field${p.changes.length === 1 ? '' : 's'} to send`, ...p.changes.map(formatChange)];
  });
  const models = plans.filter((p) => p.changes.length > 0).length;
  const fields = plans.reduce((n, p) => n + p.changes.length, 0);
  const upToDate = plans.filter((p) => p.declared && p.changes.length === 0).length;
  const verb = options.dryRun ? 'Dry run, nothing sent' : 'Plan';
  lines.push(
    models === 0
      ? `${verb}: nothing to send; ${upToDate} model${upToDate === 1 ? '' : 's'} up to date.`
      : `${verb}: ${fields} field${fields === 1 ? '' : 's'} to send to ${models} model${models === 1 ? '' : 's'}; ${upToDate} up to date.`,
  );
  lines.push(PLAN_NOTE);
  return `${lines.join('\n')}\n`;
}

function formatChange(c: ModelPlan['changes'][number]): string {
  if (c.from === undefined) return `  + ${c.field}: ${JSON.stringify(c.to)} (never applied by mls)`;
  if (c.from === c.to) return `  = ${c.field}: ${JSON.stringify(c.to)} (sent again)`;
  return `  ~ ${c.field}: ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)}`;
}

/** The plan for scripts: `from` is null for a field mls never applied. */
export function planJson(plans: readonly ModelPlan[]): string {
  const models = plans.map((p) => ({
    model_id: p.modelId,
    declared: p.declared,
    changes: p.changes.map((c) => ({ field: c.field, from: c.from ?? null, to: c.to })),
    data: dataOf(p),
  }));
  return `${JSON.stringify({ pending: plans.some((p) => p.changes.length > 0), models }, null, 2)}\n`;
}

/** One model's result of an apply, as a line. */
export function formatResult(r: ModelApplyResult): string {
  switch (r.outcome) {
    case 'applied':
      return `${r.modelId}: applied ${formatFields(r.fields)}: ${r.details ?? ''}\n`;
    case 'recorded':
      return `${r.modelId}: recorded as applied, not sent: ${formatFields(r.fields)}\n`;
    case 'failed':
      return `${r.modelId}: NOT applied ${formatFields(r.fields)}: ${r.error?.message ?? 'failed'}\n`;
    case 'unchanged':
      return `${r.modelId}: up to date\n`;
    case 'undeclared':
      return `${r.modelId}: no settings declared\n`;
  }
}

/** The closing line of an apply. */
export function formatSummary(s: ApplySummary): string {
  const n = (outcome: ModelApplyResult['outcome']) => s.results.filter((r) => r.outcome === outcome).length;
  const parts = [`${n('applied')} applied`, `${n('unchanged')} up to date`];
  if (n('recorded') > 0) parts.push(`${n('recorded')} recorded without sending`);
  parts.push(`${n('failed')} failed`);
  return `settings: ${parts.join(', ')}\n`;
}

/** The history as a table, oldest first. */
export function formatHistory(rows: readonly SettingsHistoryEntry[]): string {
  if (rows.length === 0) return 'no settings applied yet\n';
  return textTable(['TIME', 'MODEL', 'OUTCOME', 'FIELDS', 'DETAILS'], rows.map((r) => [new Date(r.atMs).toISOString(), r.modelId, r.outcome, formatFields(r.fields), r.details]));
}
