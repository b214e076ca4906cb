//! The simulated model-management service over node:http: both operations, consistent
//! paging over a snapshot, late arrivals, and injected faults. Fast enough to drive
//! benchmarks, and exposes its ground truth so tests can check what a client shipped.
//! This module routes requests and holds the state; the operations, the HTTP checks and
//! the options have modules of their own.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { LogEntry } from '../records/entry.js';
import { entryTimeNs, nsToMs } from '../time/timestamp.js';
import { NO_FAULTS, faultAnswer, pickFault, type FaultRates } from './faults.js';
import { errorAnswer, readBody, send, type Answer } from './http.js';
import { LogsEndpoint } from './logs-endpoint.js';
import { resolveOptions, validateFaults, type SimulatorOptions } from './options.js';
import { hashString, mixSeed, mulberry32 } from './prng.js';
import { answerSettings, type SettingsCall, type SettingsFailure, type SettingsUpdate } from './settings-endpoint.js';
import { emptyStats, type SimulatorStats } from './stats.js';
import { ModelLog, type TracebackEpisode } from './store.js';
import { TokenCodec } from './token.js';

/** Path of the *get model logs* operation. */
export const LOGS_PATH = '/rest/model/logs/get/';
/** Path of the *update model settings* operation. */
export const SETTINGS_PATH = '/rest/model/settings/update/';

/** A running simulator. */
export interface Simulator {
  /** Base URL, without a trailing slash. */
  url: string;
  port: number;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
  /**
   * Every entry visible now (visibleAt ≤ now), per model, sorted by time, with model_id, as
   * a reader of the spec ships it: one served off the spec (`offSpecRate`) has its fields
   * as text and says why, with its own time, in `off_spec`.
   */
  groundTruth(modelId?: string): Array<LogEntry & { model_id: string; off_spec?: { reason: string; time: string } }>;
  /**
   * The traceback episodes of python content whose lines are all visible now, per model, in
   * time order: what a multiline processor must turn into one record each.
   */
  tracebackEpisodes(modelId?: string): Array<TracebackEpisode & { model_id: string }>;
  /** Stop producing new entries (already-produced ones still become visible after their delay). */
  stopProducing(): void;
  /** Test hook: add specific entries now, visible after `visibleAfterMs` (default 0). */
  inject(modelId: string, entries: LogEntry[], visibleAfterMs?: number): void;
  /** Changes fault probabilities and behaviour from now on. */
  setFaults(f: Partial<FaultRates>): void;
  /** Zeroes the counters (a benchmark measures one phase at a time). */
  resetStats(): void;
  /** Test hook: answer `status` (default 401) to every request for these models (as if the token lost access to them); [] restores. */
  denyModels(modelIds: readonly string[], status?: 401 | 403): void;
  /** Accepted settings updates, oldest first. */
  settingsUpdates: SettingsUpdate[];
  /** Every settings request that reached the service's checks, with its answer's status, oldest first. */
  settingsCalls: SettingsCall[];
  /** Test hook: answer settings requests for these models with `status` (default 400) and `details`; [] restores. */
  failSettings(modelIds: readonly string[], failure?: Partial<SettingsFailure>): void;
  /** Counters of what was answered so far. */
  stats(): SimulatorStats;
}

/** Starts a simulator listening on `host:port` and resolves once it accepts connections. */
export async function startSimulator(given: SimulatorOptions): Promise<Simulator> {
  const options = resolveOptions(given);
  const now = (): number => Math.floor(options.clock());
  const { seed } = options;
  let faults: FaultRates = { ...NO_FAULTS, ...options.faults };
  const faultRng = mulberry32(mixSeed(seed, 0xfa17));
  const startMs = now();
  const models = new Map<string, ModelLog>();
  for (const id of options.models) {
    const own = options.ratePerModel?.[id];
    const m = new ModelLog(id, own === undefined ? options : { ...options, ratePerSec: own }, mulberry32(mixSeed(seed, hashString(id))), startMs - options.historyMs);
    m.generateUntil(startMs);
    models.set(id, m);
  }

  const stats = emptyStats();
  const settingsUpdates: SettingsUpdate[] = [];
  let denied = new Set<string>();
  let deniedStatus: 401 | 403 = 401;
  /** Aborted at close: ends the waits of slow answers. */
  const stopping = new AbortController();
  const logs = new LogsEndpoint({
    options,
    models,
    denied: (id) => (denied.has(id) ? deniedStatus : undefined),
    now,
    codec: new TokenCodec(),
    pageRng: mulberry32(mixSeed(seed, 0x9a6e)),
    stats,
  });
  const settingsCalls: SettingsCall[] = [];
  const failingSettings = new Map<string, SettingsFailure>();
  const settings = { options, models, now, updates: settingsUpdates, calls: settingsCalls, failing: failingSettings };

  /** Sends an answer, counted by status; cut short when the fault says so. */
  function reply(res: ServerResponse, a: Answer, truncated = false): void {
    stats.byStatus[a.status] = (stats.byStatus[a.status] ?? 0) + 1;
    send(res, a, truncated);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    const q = req.url?.indexOf('?') ?? -1;
    const path = q >= 0 ? req.url!.slice(0, q) : req.url;
    const op = path === LOGS_PATH ? 'logs' : path === SETTINGS_PATH ? 'settings' : undefined;
    if (op === undefined) {
      req.resume();
      return reply(res, errorAnswer(404, 'Not found'));
    }
    if (req.method !== 'POST') {
      req.resume();
      return reply(res, errorAnswer(405, 'Method not allowed', { allow: 'POST' }));
    }
    if (op === 'logs') {
      stats.logsRequests++;
      stats.firstLogsRequestMs ??= now();
    } else stats.settingsRequests++;

    const raw = await readBody(req, res);
    if (typeof raw !== 'string') return reply(res, raw);

    // Faults come from the infrastructure in front of the service, so they precede every check.
    const fault = pickFault(faults, faultRng);
    if (fault !== undefined) stats.faultsInjected[fault] = (stats.faultsInjected[fault] ?? 0) + 1;
    const early = fault === undefined ? undefined : faultAnswer(fault, faults, now, faultRng);
    if (early) return reply(res, early);
    if (fault === 'slow') await delay(faults.slowMs, undefined, { signal: stopping.signal });
    const answer = op === 'logs' ? logs.answer(req, raw) : answerSettings(req, raw, settings);
    if (fault === 'truncated') return reply(res, answer, true);
    answer.commit?.();
    reply(res, answer);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent || stopping.signal.aborted) res.destroy();
      else reply(res, errorAnswer(500, `Simulator failure: ${String(err)}`));
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const urlHost = options.host.includes(':') ? `[${options.host}]` : options.host;

  let closing: Promise<void> | undefined;
  const modelOrFail = (id: string): ModelLog => {
    const m = models.get(id);
    if (!m) throw new RangeError(`unknown model: ${id}`);
    return m;
  };
  /** The models asked for (all when undefined), their entries generated up to `t`. */
  const generatedUntil = (t: number, modelId: string | undefined): ModelLog[] => {
    const list = modelId === undefined ? [...models.values()] : [modelOrFail(modelId)];
    for (const m of list) m.generateUntil(t);
    return list;
  };

  return {
    url: `http://${urlHost}:${port}`,
    port,
    settingsUpdates,
    settingsCalls,
    failSettings(modelIds, failure = {}) {
      failingSettings.clear();
      for (const id of modelIds) failingSettings.set(id, { status: failure.status ?? 400, details: failure.details ?? `Model ${id} cannot be updated now.` });
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        stopping.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
    groundTruth(modelId) {
      const t = now();
      return generatedUntil(t, modelId).flatMap((m) => m.visibleIndexes(t).map((i) => ({ model_id: m.id, ...m.shipped(i) })));
    },
    tracebackEpisodes(modelId) {
      const t = now();
      return generatedUntil(t, modelId).flatMap((m) => m.tracebacks(t).map((e) => ({ model_id: m.id, ...e })));
    },
    stopProducing() {
      const t = now();
      for (const m of generatedUntil(t, undefined)) m.stopAt(t);
    },
    inject(modelId, entries, visibleAfterMs = 0) {
      const t = now();
      const [m] = generatedUntil(t, modelId);
      const times = entries.map((e) => {
        const ns = entryTimeNs(e.time);
        if (ns === undefined) throw new RangeError(`inject: time must be ISO 8601 with 0–9 fractional digits, got ${JSON.stringify(e.time)}`);
        return ns;
      });
      entries.forEach((e, k) => m!.inject(e, nsToMs(times[k]!), Number(times[k]! - BigInt(nsToMs(times[k]!)) * 1_000_000n), t + visibleAfterMs));
    },
    denyModels(modelIds, status = 401) {
      denied = new Set(modelIds);
      deniedStatus = status;
    },
    setFaults(f) {
      validateFaults(f);
      faults = { ...faults, ...f };
    },
    stats() {
      return structuredClone(stats);
    },
    resetStats() {
      Object.assign(stats, emptyStats());
    },
  };
}
