//! The status snapshot of `/status` and `mls status`: per-model checkpoints and lag, per-sink
//! cursors, backlogs and errors, the journal's size. Built from the state file alone (a
//! stopped daemon), or with what a running daemon adds (last errors, window events).
import type { StatusStore } from '../journal/status-store.js';
import type { AbandonedWindow } from '../poller/window-events.js';
import { lagSeconds } from '../poller/lag.js';
import type { RateKind } from './rates.js';

/** What the window limits did to a model since the daemon started. */
export interface ModelWindowEvents {
  /** Window fetches cut short and started again on a shorter window. */
  splits: number;
  /** The last windows completed as read although a cap stopped their fetch, oldest first. */
  abandoned: readonly AbandonedWindow[];
}

/** A snapshot of what the daemon is doing, for `/status` and `mls status`. */
export interface DaemonStatus {
  /** The state file's installation id (part of every batch id); undefined for a file no version with ids has opened. */
  installationId: string | undefined;
  models: Array<{
    id: string;
    startMs: number;
    watermarkMs: number | undefined;
    lagSeconds: number;
    window: { fromMs: number; toMs: number; hasToken: boolean } | undefined;
    lastError: string | undefined;
    /** Only from a running daemon. */
    windowSplits?: number;
    /** Only from a running daemon. */
    abandonedWindows?: readonly AbandonedWindow[];
    /** Only from a running daemon: polling paused by an error (a refused token, a page over the size limit). */
    paused?: boolean;
    /** Only from a running daemon: new entries journaled per second, over the last `ratesWindowSeconds`. */
    entriesPerSecond?: number;
    /** Only from a running daemon: requests to the service per minute (answered, retried or failed), over the same window. */
    requestsPerMinute?: number;
  }>;
  /**
   * Per sink. Every count is of *entries*, log lines as the service returned them (after
   * dedupe), whatever *records* processing makes of them for the sink (a traceback of 12
   * entries is one record): records are counted by `mls_model_log_records_total`.
   */
  sinks: Array<{
    name: string;
    type: string;
    /** The seq of the last entry the sink acknowledged (with the entries before it). */
    cursor: number;
    /** Entries in the journal the sink has not acknowledged yet. */
    backlogEntries: number;
    /** Entries the sink acknowledged since the state file was made. */
    deliveredEntries: number;
    /** Entries dropped before the sink got them (`when_full: drop_oldest`). */
    droppedEntries: number;
    deadLetters: number;
    lastError: string | undefined;
    failingSeconds: number | undefined;
    /** Only from a running daemon: records handed to the sink per second, over the last `ratesWindowSeconds`. */
    recordsPerSecond?: number;
    /** Only from a running daemon: how fast the backlog grew (entries per second, negative while it shrinks), over the same window. */
    backlogPerSecond?: number;
    /** Only from a running daemon: entries in batches sent and not yet acknowledged. */
    inFlightEntries?: number;
    /** Only from a running daemon: failed sends of the batch being sent now (0 while the sink delivers). */
    retries?: number;
  }>;
  /**
   * The journal: `entries` (and their `bytes`) held until every sink has them; `lastSeq`, the
   * entries journaled since the state file was made; `full` (only from a running daemon),
   * at its bounds with `when_full: block`: polling waits.
   */
  journal: { entries: number; bytes: number; lastSeq: number; full?: boolean };
  /** Only from a running daemon: the span (seconds) the rates are taken over. */
  ratesWindowSeconds?: number;
}

/** What a running daemon knows beyond the state file; all optional. */
export interface StatusContext {
  /** The configured models (others in the file are left out). */
  models?: readonly string[];
  sinkTypes?: ReadonlyMap<string, string>;
  modelErrors?: ReadonlyMap<string, string | undefined>;
  modelWindows?: ReadonlyMap<string, ModelWindowEvents>;
  sinkErrors?: ReadonlyMap<string, string | undefined>;
  /** Since when (clock ms) each sink has been failing without an acknowledgement. */
  sinkFailingSince?: ReadonlyMap<string, number | undefined>;
  /** What a running daemon adds to each model and sink: rates, pauses, batches in flight. */
  live?: {
    windowSeconds: number;
    perSecond(kind: RateKind, name: string): number;
    paused(model: string): boolean;
    journalFull: boolean;
    sinks: ReadonlyMap<string, { inFlightEntries: number; retries: number }>;
  };
}

/** Builds the status snapshot from the store (also used by `mls status` without a daemon). */
export function buildStatus(store: StatusStore, nowMs: number, ctx: StatusContext = {}): DaemonStatus {
  const size = store.journalSize();
  const lastSeq = store.lastSeq();
  const dlq = store.deadLetterCounts();
  const configured = ctx.models ? new Set(ctx.models) : undefined;
  const checkpoints = store.listCheckpoints().filter((c) => !configured || configured.has(c.modelId));
  const { live } = ctx;
  return {
    installationId: store.installationId,
    models: checkpoints.map((c) => {
      const windows = ctx.modelWindows?.get(c.modelId);
      return {
        id: c.modelId,
        startMs: c.startMs,
        watermarkMs: c.watermarkMs,
        lagSeconds: lagSeconds(c, nowMs),
        window: c.window ? { fromMs: c.window.fromMs, toMs: c.window.toMs, hasToken: c.window.nextToken !== undefined } : undefined,
        lastError: ctx.modelErrors?.get(c.modelId),
        ...(windows ? { windowSplits: windows.splits, abandonedWindows: windows.abandoned } : {}),
        ...(live && { paused: live.paused(c.modelId), entriesPerSecond: live.perSecond('entries', c.modelId), requestsPerMinute: live.perSecond('requests', c.modelId) * 60 }),
      };
    }),
    sinks: store.listSinks().map((s) => ({
      name: s.name,
      type: ctx.sinkTypes?.get(s.name) ?? 'unknown',
      cursor: s.cursor,
      backlogEntries: Math.min(size.entries, Math.max(0, lastSeq - s.cursor)),
      deliveredEntries: s.delivered,
      droppedEntries: s.dropped,
      deadLetters: dlq.get(s.name)?.entries ?? 0,
      lastError: ctx.sinkErrors?.get(s.name),
      failingSeconds: failingSeconds(ctx.sinkFailingSince?.get(s.name), nowMs),
      ...(live && { recordsPerSecond: live.perSecond('records', s.name), backlogPerSecond: live.perSecond('backlog', s.name), ...live.sinks.get(s.name) }),
    })),
    journal: { ...size, lastSeq, ...(live && { full: live.journalFull }) },
    ...(live && { ratesWindowSeconds: live.windowSeconds }),
  };
}

function failingSeconds(sinceMs: number | undefined, nowMs: number): number | undefined {
  return sinceMs === undefined ? undefined : Math.max(0, (nowMs - sinceMs) / 1000);
}
