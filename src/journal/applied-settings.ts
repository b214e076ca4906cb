//! Model settings as mls last applied them, and the history of applies (settings as code).
//! The service cannot be read back, so what a plan compares the config with is what was
//! recorded here after each successful request (or adopted with `--record-only`).
import type Database from 'better-sqlite3';
import type { DB, StateDb, Tx } from './db.js';

/** A value of a settings field, as sent to the service. */
export type AppliedValue = number | boolean | string;

/** Fields of a model's settings and their values. */
export type AppliedFields = Record<string, AppliedValue>;

/** How one apply of a model's settings ended. */
export type SettingsOutcome = 'applied' | 'failed' | 'recorded';

/** One apply of a model's settings, as the history keeps it. */
export interface SettingsHistoryEntry {
  id: number;
  modelId: string;
  atMs: number;
  /** The fields sent (or, for `recorded`, recorded without sending). */
  fields: AppliedFields;
  outcome: SettingsOutcome;
  /** The service's `details` on success; the error otherwise. */
  details: string;
}

/** Rows of history kept per model; older ones are deleted as new ones come. */
export const SETTINGS_HISTORY_PER_MODEL = 50;

/** Details and errors are kept up to this many characters. */
const MAX_DETAILS = 2000;

interface HistoryRow {
  id: number;
  model_id: string;
  at_ms: number;
  fields: string;
  outcome: string;
  details: string;
}

/** The applied settings and their history as the file holds them (the store's and the read-only reader's). */
export class AppliedSettingsReads {
  private readonly ofModel: Database.Statement | undefined;
  private readonly all: Database.Statement | undefined;
  private readonly recent: Database.Statement | undefined;

  constructor(db: DB) {
    // A read-only reader may open a file of an older version, without the tables.
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'applied_settings'").get() === undefined) return;
    this.ofModel = db.prepare('SELECT field, value FROM applied_settings WHERE model_id = ?');
    this.all = db.prepare('SELECT model_id, field, value FROM applied_settings');
    this.recent = db.prepare('SELECT * FROM (SELECT * FROM settings_history WHERE @modelId IS NULL OR model_id = @modelId ORDER BY id DESC LIMIT @limit) ORDER BY id');
  }

  /** The fields last applied to `modelId` (empty when none). */
  applied(modelId: string): AppliedFields {
    const out: AppliedFields = {};
    for (const r of (this.ofModel?.all(modelId) ?? []) as { field: string; value: string }[]) out[r.field] = JSON.parse(r.value) as AppliedValue;
    return out;
  }

  /** The fields last applied, per model. */
  appliedAll(): Map<string, AppliedFields> {
    const out = new Map<string, AppliedFields>();
    for (const r of (this.all?.all() ?? []) as { model_id: string; field: string; value: string }[]) {
      let fields = out.get(r.model_id);
      if (!fields) out.set(r.model_id, (fields = {}));
      fields[r.field] = JSON.parse(r.value) as AppliedValue;
    }
    return out;
  }

  /** The last `limit` applies, oldest first, optionally of one model. */
  history(modelId?: string, limit = 1000): SettingsHistoryEntry[] {
    const rows = this.recent?.all({ modelId: modelId ?? null, limit }) as HistoryRow[] | undefined;
    return (rows ?? []).map((r) => ({
      id: r.id,
      modelId: r.model_id,
      atMs: r.at_ms,
      fields: JSON.parse(r.fields) as AppliedFields,
      outcome: r.outcome as SettingsOutcome,
      details: r.details,
    }));
  }
}

/** The applied settings of the store: what was applied is recorded after each success. */
export class AppliedSettings extends AppliedSettingsReads {
  private readonly recordTx: Tx<[modelId: string, fields: AppliedFields, outcome: SettingsOutcome, details: string], void>;

  constructor(
    private readonly state: StateDb,
    private readonly now: () => number,
  ) {
    super(state.db);
    const db = state.db;
    const upsert = db.prepare(
      'INSERT INTO applied_settings (model_id, field, value, applied_ms) VALUES (?, ?, ?, ?) ON CONFLICT (model_id, field) DO UPDATE SET value = excluded.value, applied_ms = excluded.applied_ms',
    );
    const insert = db.prepare('INSERT INTO settings_history (model_id, at_ms, fields, outcome, details) VALUES (?, ?, ?, ?, ?)');
    const prune = db.prepare(
      'DELETE FROM settings_history WHERE model_id = ? AND id <= (SELECT id FROM settings_history WHERE model_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
    );
    this.recordTx = db.transaction((modelId: string, fields: AppliedFields, outcome: SettingsOutcome, details: string) => {
      const at = this.now();
      if (outcome !== 'failed') for (const [field, value] of Object.entries(fields)) upsert.run(modelId, field, JSON.stringify(value), at);
      insert.run(modelId, at, JSON.stringify(fields), outcome, details.slice(0, MAX_DETAILS));
      prune.run(modelId, modelId, SETTINGS_HISTORY_PER_MODEL);
    });
  }

  /**
   * Records an apply of `modelId`'s settings, in one synced transaction: with `applied` or
   * `recorded`, `fields` become the model's applied values; every outcome adds a row of
   * history (the model's oldest rows beyond {@link SETTINGS_HISTORY_PER_MODEL} are deleted).
   */
  record(modelId: string, fields: AppliedFields, outcome: SettingsOutcome, details: string): void {
    this.state.synced(this.recordTx, modelId, fields, outcome, details);
  }
}
