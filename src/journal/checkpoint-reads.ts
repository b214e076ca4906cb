//! Checkpoints as the state file holds them: the row of each model read into a
//! {@link Checkpoint}. The store's checkpoints (checkpoints.ts) and the read-only reader
//! (reader.ts) both read through {@link CheckpointReads}.
import type Database from 'better-sqlite3';
import type { DB } from './db.js';

/** Where polling of one model stands. */
export interface Checkpoint {
  modelId: string;
  startMs: number;
  watermarkMs: number | undefined;
  window: { fromMs: number; toMs: number; nextToken: string | undefined; tokens?: readonly string[] } | undefined;
  fetchId: number;
  planState: string | undefined;
  lastEntryNs: bigint | undefined;
  /** The `start_at` setting (as written) the stored start answers to; undefined in files of earlier versions. */
  startAt: string | undefined;
  updatedMs: number;
}

type CheckpointRow = Record<string, bigint | string | null>;

/** Checkpoints as the file holds them (the store's and the read-only reader's). */
export class CheckpointReads {
  private readonly one: Database.Statement;
  private readonly all: Database.Statement;

  constructor(db: DB) {
    this.one = db.prepare('SELECT * FROM checkpoints WHERE model_id = ?').safeIntegers(true);
    this.all = db.prepare('SELECT * FROM checkpoints ORDER BY model_id').safeIntegers(true);
  }

  /** The checkpoint of a model, if it was ever seen. */
  get(modelId: string): Checkpoint | undefined {
    const row = this.one.get(modelId) as CheckpointRow | undefined;
    return row ? toCheckpoint(row) : undefined;
  }

  /** All checkpoints, by model id. */
  list(): Checkpoint[] {
    return (this.all.all() as CheckpointRow[]).map(toCheckpoint);
  }
}

function num(v: bigint | string | null | undefined): number | undefined {
  return v === null || v === undefined ? undefined : Number(v);
}

function splitTokens(v: bigint | string | null | undefined): { tokens?: string[] } {
  return typeof v === 'string' && v !== '' ? { tokens: v.split(' ') } : {};
}

function toCheckpoint(r: CheckpointRow): Checkpoint {
  const from = num(r.win_from);
  const to = num(r.win_to);
  return {
    modelId: String(r.model_id),
    startMs: Number(r.start_ms),
    watermarkMs: num(r.watermark_ms),
    window: from !== undefined && to !== undefined ? { fromMs: from, toMs: to, nextToken: (r.next_token as string | null) ?? undefined, ...splitTokens(r.win_tokens) } : undefined,
    fetchId: Number(r.fetch_id),
    planState: (r.plan_state as string | null) ?? undefined,
    lastEntryNs: r.last_entry_ns === null || r.last_entry_ns === undefined ? undefined : BigInt(r.last_entry_ns),
    startAt: (r.start_at as string | null) ?? undefined,
    updatedMs: Number(r.updated_ms),
  };
}
