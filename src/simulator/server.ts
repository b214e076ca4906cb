//! The simulated model-management service over node:http: both operations, consistent
//! paging over a snapshot, late arrivals, and injected faults. Fast enough to drive
//! benchmarks, and exposes its ground truth so tests can check what a client shipped.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomInt } from 'node:crypto';
import type { LogEntry } from '../records/entry.js';
import { FAULT_KINDS, NO_FAULTS, pickFault, retryAfterValue, type FaultKind, type FaultRates } from './faults.js';
import { hashString, mixSeed, mulberry32 } from './prng.js';
import { ModelLog, type GenerationParams, type Snapshot } from './store.js';
import { parseEntryTime, parseRequestTime } from './timefmt.js';
import { TokenCodec } from './token.js';

/** Path of the *get model logs* operation. */
export const LOGS_PATH = '/rest/model/logs/get/';
/** Path of the *update model settings* operation. */
export const SETTINGS_PATH = '/rest/model/settings/update/';

/** How the last page of a window fetch says that no more logs remain. */
export type EndStyle = 'absent' | 'null' | 'empty' | 'rotate';

/** Options of {@link startSimulator}. */
export interface SimulatorOptions {
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port; 0 picks a free one. Default 0. */
  port?: number;
  /** The workspace token; `Authorization` must equal it exactly. */
  token: string;
  /** Also accept `Authorization: Bearer <token>`. Default false, as the real service. */
  acceptBearer?: boolean;
  /** Ids of the models the service knows. */
  models: string[];
  /** New entries per second per model; may be fractional or 0. */
  ratePerSec: number;
  /**
   * Span of entries already present at start, in ms. Default 0. Each entry costs about
   * 40 bytes, so keep `historyMs / 1000 × ratePerSec × models` below about 5 million.
   */
  historyMs?: number;
  /** Each entry becomes visible after a random delay in [min, max] ms (late arrivals). Default none. */
  ingestDelayMs?: { min: number; max: number };
  /** Entries per page, fixed or drawn per page from a range. Default 500. */
  pageSize?: number | { min: number; max: number };
  /** Order of the entries within a page. Default `sorted`. */
  order?: 'sorted' | 'shuffled';
  /** How the last page signals the end; `rotate` cycles through the other three. Default `absent`. */
  endStyle?: EndStyle;
  /** Tokens older than this are rejected with 400 `next_token expired`. Default 5 minutes. */
  tokenTtlMs?: number;
  /** Fault probabilities per request; every kind defaults to 0. */
  faults?: Partial<FaultRates>;
  /** Probability that an entry has a genuine identical twin (same time, stream and line). Default 0. */
  twinRate?: number;
  /** Probability of a multi-line entry (a traceback). Default 0.02. */
  multilineRate?: number;
  /** Probability of an entry with non-ASCII text. Default 0.02. */
  unicodeRate?: number;
  /** Probability of an empty line. Default 0.005. */
  emptyRate?: number;
  /** Probability of a line of about 9 KB. Default 0.002. */
  longRate?: number;
  /** Share of entries whose time has fewer than nine fractional digits. Default 0.1. */
  shortDigitsRate?: number;
  /** Seed of every random choice (content, delays, page sizes, faults). Default random. */
  seed?: number;
  /** Epoch milliseconds; entry times and visibility follow it. Default `Date.now`. */
  clock?: () => number;
}

/** Counters of what the simulator answered. */
export interface SimulatorStats {
  requests: number;
  logsRequests: number;
  /** Logs requests that asked for fewer logs (`is_less_logs: true`) and were answered. */
  lessLogsRequests: number;
  settingsRequests: number;
  /** Entries sent in complete, successful pages. */
  entriesServed: number;
  faultsInjected: Record<string, number>;
  /** Answers per HTTP status (as a string). */
  byStatus: Record<string, number>;
  /** When the first logs request since the start (or the last {@link Simulator.resetStats}) arrived, epoch ms. */
  firstLogsRequestMs: number | undefined;
}

/** One accepted settings update. */
export interface SettingsUpdate {
  modelId: string;
  data: Record<string, unknown>;
  atMs: number;
}

/** A running simulator. */
export interface Simulator {
  /** Base URL, without a trailing slash. */
  url: string;
  port: number;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
  /** Every entry visible now (visibleAt ≤ now), per model, sorted by time, with model_id. */
  groundTruth(modelId?: string): Array<LogEntry & { model_id: string }>;
  /** Stop producing new entries (already-produced ones still become visible after their delay). */
  stopProducing(): void;
  /** Test hook: add specific entries now, visible after `visibleAfterMs` (default 0). */
  inject(modelId: string, entries: LogEntry[], visibleAfterMs?: number): void;
  /** Changes fault probabilities and behaviour from now on. */
  setFaults(f: Partial<FaultRates>): void;
  /** Zeroes the counters (a benchmark measures one phase at a time). */
  resetStats(): void;
  /** Test hook: answer 401 to every request for these models (as if the token lost access to them); [] restores. */
  denyModels(modelIds: readonly string[]): void;
  /** Accepted settings updates, oldest first. */
  settingsUpdates: SettingsUpdate[];
  /** Counters of what was answered so far. */
  stats(): SimulatorStats;
}

interface Answer {
  status: number;
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Side effects of a complete answer; skipped when the answer is cut short. */
  commit?: () => void;
}

const INTEGER_FIELDS = new Set(['min_replica', 'max_replica', 'scale_down_delay', 'inference_time', 'container_concurrency']);
const BOOLEAN_FIELDS = new Set(['is_dedicated', 'is_input_output_enabled']);
const STRING_FIELDS = new Set(['machine_type']);
const MAX_BODY_BYTES = 1 << 20;
const TIME_FORMAT_HINT = 'an ISO 8601 UTC timestamp with milliseconds, like 2024-05-01T10:00:00.000Z';

function errorAnswer(status: number, details: string, headers?: Record<string, string>): Answer {
  return { status, body: JSON.stringify({ status: 'error', details }), ...(headers ? { headers } : {}) };
}

function checkNonNegative(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new RangeError(`${name} must be a finite number ≥ 0`);
}

function checkRate(name: string, value: number | undefined): void {
  if (value !== undefined && !(value >= 0 && value <= 1)) throw new RangeError(`${name} must be a probability in [0, 1]`);
}

function validateOptions(o: SimulatorOptions): void {
  if (typeof o.token !== 'string' || o.token === '') throw new TypeError('token must be a non-empty string');
  if (!Array.isArray(o.models) || o.models.some((m) => typeof m !== 'string' || m === '')) {
    throw new TypeError('models must be an array of non-empty strings');
  }
  if (new Set(o.models).size !== o.models.length) throw new RangeError('models must not repeat an id');
  checkNonNegative('ratePerSec', o.ratePerSec);
  if (o.ratePerSec === undefined) throw new TypeError('ratePerSec is required');
  checkNonNegative('historyMs', o.historyMs);
  checkNonNegative('tokenTtlMs', o.tokenTtlMs);
  if (o.ingestDelayMs) {
    checkNonNegative('ingestDelayMs.min', o.ingestDelayMs.min);
    checkNonNegative('ingestDelayMs.max', o.ingestDelayMs.max);
    if (o.ingestDelayMs.min > o.ingestDelayMs.max) throw new RangeError('ingestDelayMs.min must not exceed ingestDelayMs.max');
  }
  const ps = o.pageSize;
  if (ps !== undefined) {
    const [min, max] = typeof ps === 'number' ? [ps, ps] : [ps.min, ps.max];
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min) {
      throw new RangeError('pageSize must be an integer ≥ 1 or a range {min, max} of such integers with min ≤ max');
    }
  }
  if (o.order !== undefined && o.order !== 'sorted' && o.order !== 'shuffled') throw new RangeError("order must be 'sorted' or 'shuffled'");
  if (o.endStyle !== undefined && !['absent', 'null', 'empty', 'rotate'].includes(o.endStyle)) {
    throw new RangeError("endStyle must be 'absent', 'null', 'empty' or 'rotate'");
  }
  for (const k of ['twinRate', 'multilineRate', 'unicodeRate', 'emptyRate', 'longRate', 'shortDigitsRate'] as const) checkRate(k, o[k]);
  if (o.faults) validateFaults(o.faults);
}

function validateFaults(f: Partial<FaultRates>): void {
  for (const k of FAULT_KINDS) checkRate(`faults.${k}`, f[k]);
  checkNonNegative('faults.slowMs', f.slowMs);
  checkNonNegative('faults.retryAfter', f.retryAfter);
  if (f.retryAfterStyle !== undefined && !['seconds', 'date', 'mixed'].includes(f.retryAfterStyle)) {
    throw new RangeError("faults.retryAfterStyle must be 'seconds', 'date' or 'mixed'");
  }
}

/** Starts a simulator listening on `host:port` and resolves once it accepts connections. */
export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  validateOptions(options);
  const clock = options.clock ?? Date.now;
  const now = (): number => Math.floor(clock());
  const seed = options.seed ?? randomInt(0, 2 ** 32 - 1);
  const tokenTtlMs = options.tokenTtlMs ?? 5 * 60_000;
  const ps = options.pageSize ?? 500;
  const [pageMin, pageMax] = typeof ps === 'number' ? [ps, ps] : [ps.min, ps.max];
  const order = options.order ?? 'sorted';
  const endStyle = options.endStyle ?? 'absent';
  const acceptBearer = options.acceptBearer ?? false;
  const bearer = `Bearer ${options.token}`;
  let faults: FaultRates = { ...NO_FAULTS, ...options.faults };
  const faultRng = mulberry32(mixSeed(seed, 0xfa17));
  const pageRng = mulberry32(mixSeed(seed, 0x9a6e));
  const codec = new TokenCodec();

  const params: GenerationParams = {
    ratePerSec: options.ratePerSec,
    delayMin: Math.round(options.ingestDelayMs?.min ?? 0),
    delayMax: Math.round(options.ingestDelayMs?.max ?? 0),
    twinRate: options.twinRate ?? 0,
    shortDigitsRate: options.shortDigitsRate ?? 0.1,
    content: {
      multilineRate: options.multilineRate ?? 0.02,
      unicodeRate: options.unicodeRate ?? 0.02,
      emptyRate: options.emptyRate ?? 0.005,
      longRate: options.longRate ?? 0.002,
    },
  };
  const startMs = now();
  const models = new Map<string, ModelLog>();
  for (const id of options.models) {
    const m = new ModelLog(id, params, mulberry32(mixSeed(seed, hashString(id))), startMs - (options.historyMs ?? 0));
    m.generateUntil(startMs);
    models.set(id, m);
  }

  let endCounter = 0;
  const emptyStats = (): SimulatorStats => ({
    requests: 0,
    logsRequests: 0,
    lessLogsRequests: 0,
    settingsRequests: 0,
    entriesServed: 0,
    faultsInjected: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])),
    byStatus: {},
    firstLogsRequestMs: undefined,
  });
  const stats = emptyStats();
  const settingsUpdates: SettingsUpdate[] = [];
  let denied = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();

  function parseCommon(req: IncomingMessage, raw: string): { body: Record<string, unknown> } | { error: Answer } {
    const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct !== 'application/json') return { error: errorAnswer(415, 'Content-Type must be application/json') };
    const auth = req.headers.authorization;
    if (auth !== options.token && !(acceptBearer && auth === bearer)) return { error: errorAnswer(401, 'Invalid token') };
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return { error: errorAnswer(400, 'Request body must be valid JSON') };
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return { error: errorAnswer(400, 'Request body must be a JSON object') };
    return { body: body as Record<string, unknown> };
  }

  function findModel(body: Record<string, unknown>): ModelLog | Answer {
    const id = body.model_id;
    if (typeof id !== 'string' || id === '') return errorAnswer(400, 'model_id must be a non-empty string');
    return models.get(id) ?? errorAnswer(404, 'Model not found');
  }

  function handleLogs(req: IncomingMessage, raw: string): Answer {
    const parsed = parseCommon(req, raw);
    if ('error' in parsed) return parsed.error;
    const { body } = parsed;
    const model = findModel(body);
    if (!(model instanceof ModelLog)) return model;
    if (denied.has(model.id)) return errorAnswer(401, 'Invalid token');
    const bounds: number[] = [];
    for (const field of ['time_from', 'time_to'] as const) {
      const v = body[field];
      if (typeof v !== 'string') return errorAnswer(400, `${field} is required and must be ${TIME_FORMAT_HINT}`);
      const ms = parseRequestTime(v);
      if (ms === undefined) return errorAnswer(400, `${field} must be ${TIME_FORMAT_HINT}`);
      bounds.push(ms);
    }
    const [fromMs, toMs] = bounds as [number, number];
    if (fromMs > toMs) return errorAnswer(400, 'time_from must not be after time_to');
    const less = body.is_less_logs;
    if (less !== undefined && typeof less !== 'boolean') return errorAnswer(400, 'is_less_logs must be a boolean');
    const tok = body.next_token;
    if (tok !== undefined && tok !== null && typeof tok !== 'string') return errorAnswer(400, 'next_token must be a string');

    const t = now();
    model.generateUntil(t);
    let snap: Snapshot;
    let start: number;
    if (typeof tok === 'string' && tok !== '') {
      const cur = codec.decode(tok);
      if (!cur) return errorAnswer(400, 'invalid next_token');
      if (cur.modelId !== model.id || cur.fromMs !== fromMs || cur.toMs !== toMs) {
        return errorAnswer(400, 'next_token does not belong to this model and time window');
      }
      if (t - cur.issuedAt > tokenTtlMs) return errorAnswer(400, 'next_token expired');
      snap = { time: cur.snapTime, seq: cur.snapSeq };
      start = model.afterKey(...cur.after);
    } else {
      snap = model.snapshot(t);
      start = model.lowerBoundMs(fromMs);
    }
    let size = pageMin === pageMax ? pageMin : pageRng.int(pageMin, pageMax);
    if (less === true) size = Math.max(1, Math.floor(size / 4));
    const { indexes, more } = model.slice(start, toMs, snap, size);

    let tail: string;
    let endAdvance = 0;
    if (more) {
      const token = codec.encode({ modelId: model.id, fromMs, toMs, snapTime: snap.time, snapSeq: snap.seq, after: model.key(indexes[indexes.length - 1]!), issuedAt: t });
      tail = `,"next_token":"${token}"}`;
    } else {
      const style = endStyle === 'rotate' ? (['absent', 'null', 'empty'] as const)[endCounter % 3]! : endStyle;
      if (endStyle === 'rotate') endAdvance = 1;
      tail = style === 'absent' ? '}' : style === 'null' ? ',"next_token":null}' : ',"next_token":""}';
    }
    const served = order === 'shuffled' ? shuffle(indexes.slice()) : indexes;
    let out = '{"status":"success","details":[';
    for (let k = 0; k < served.length; k++) {
      if (k > 0) out += ',';
      out += model.fragment(served[k]!);
    }
    out += ']' + tail;
    return {
      status: 200,
      body: out,
      commit: () => {
        stats.entriesServed += indexes.length;
        if (less === true) stats.lessLogsRequests++;
        endCounter += endAdvance;
      },
    };
  }

  function shuffle(a: number[]): number[] {
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(pageRng.next() * (i + 1));
      const x = a[i]!;
      a[i] = a[j]!;
      a[j] = x;
    }
    return a;
  }

  function handleSettings(req: IncomingMessage, raw: string): Answer {
    const parsed = parseCommon(req, raw);
    if ('error' in parsed) return parsed.error;
    const { body } = parsed;
    const model = findModel(body);
    if (!(model instanceof ModelLog)) return model;
    const data = body.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return errorAnswer(400, 'data must be an object');
    for (const [k, v] of Object.entries(data)) {
      if (INTEGER_FIELDS.has(k)) {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return errorAnswer(400, `${k} must be a non-negative integer`);
      } else if (BOOLEAN_FIELDS.has(k)) {
        if (typeof v !== 'boolean') return errorAnswer(400, `${k} must be a boolean`);
      } else if (STRING_FIELDS.has(k)) {
        if (typeof v !== 'string' || v === '') return errorAnswer(400, `${k} must be a non-empty string`);
      } else {
        return errorAnswer(400, `Unknown field in data: ${k}`);
      }
    }
    const record: SettingsUpdate = { modelId: model.id, data: { ...(data as Record<string, unknown>) }, atMs: now() };
    return {
      status: 200,
      body: JSON.stringify({ status: 'success', details: `Model ${model.id} updated successfully.` }),
      commit: () => settingsUpdates.push(record),
    };
  }

  function send(res: ServerResponse, a: Answer): void {
    stats.byStatus[a.status] = (stats.byStatus[a.status] ?? 0) + 1;
    // Encoding once is cheaper than measuring the string and then encoding it on write.
    const buf = Buffer.from(a.body);
    res.writeHead(a.status, { 'content-type': a.contentType ?? 'application/json', 'content-length': buf.length, ...a.headers });
    res.end(buf);
  }

  function sendTruncated(res: ServerResponse, a: Answer): void {
    stats.byStatus[a.status] = (stats.byStatus[a.status] ?? 0) + 1;
    const buf = Buffer.from(a.body);
    res.writeHead(a.status, { 'content-type': a.contentType ?? 'application/json', 'content-length': buf.length, ...a.headers });
    res.write(buf.subarray(0, Math.floor(buf.length / 2)), () => res.socket?.destroy());
  }

  function faultAnswer(kind: FaultKind): Answer | undefined {
    switch (kind) {
      case 'error500':
        return errorAnswer(500, 'Internal server error');
      case 'error503':
        return errorAnswer(503, 'Service temporarily unavailable', { 'retry-after': retryAfterValue(faults, now(), faultRng) });
      case 'error429':
        return errorAnswer(429, 'Too many requests', { 'retry-after': retryAfterValue(faults, now(), faultRng) });
      case 'html200':
        return {
          status: 200,
          contentType: 'text/html; charset=utf-8',
          body: '<html><head><title>Maintenance</title></head><body><h1>We will be back soon</h1><p>The service is under maintenance.</p></body></html>',
        };
      default:
        return undefined;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    const q = req.url?.indexOf('?') ?? -1;
    const path = q >= 0 ? req.url!.slice(0, q) : req.url;
    const op = path === LOGS_PATH ? 'logs' : path === SETTINGS_PATH ? 'settings' : undefined;
    if (op === undefined) {
      req.resume();
      return send(res, errorAnswer(404, 'Not found'));
    }
    if (req.method !== 'POST') {
      req.resume();
      return send(res, errorAnswer(405, 'Method not allowed', { allow: 'POST' }));
    }
    if (op === 'logs') {
      stats.logsRequests++;
      stats.firstLogsRequestMs ??= now();
    } else stats.settingsRequests++;

    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.setHeader('connection', 'close');
        return send(res, errorAnswer(413, 'Request body too large'));
      }
      chunks.push(chunk);
    }
    const raw = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');

    // Faults come from the infrastructure in front of the service, so they precede every check.
    const fault = pickFault(faults, faultRng);
    if (fault !== undefined) stats.faultsInjected[fault] = (stats.faultsInjected[fault] ?? 0) + 1;
    const early = fault === undefined ? undefined : faultAnswer(fault);
    if (early) return send(res, early);
    if (fault === 'slow') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, faults.slowMs);
        timers.add(timer);
      });
    }
    const answer = op === 'logs' ? handleLogs(req, raw) : handleSettings(req, raw);
    if (fault === 'truncated') return sendTruncated(res, answer);
    answer.commit?.();
    send(res, answer);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, errorAnswer(500, `Simulator failure: ${String(err)}`));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const modelOrFail = (id: string): ModelLog => {
    const m = models.get(id);
    if (!m) throw new RangeError(`unknown model: ${id}`);
    return m;
  };

  return {
    url: `http://${urlHost}:${port}`,
    port,
    settingsUpdates,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
    groundTruth(modelId) {
      const t = now();
      const list = modelId === undefined ? [...models.values()] : [modelOrFail(modelId)];
      const out: Array<LogEntry & { model_id: string }> = [];
      for (const m of list) {
        m.generateUntil(t);
        for (const i of m.visibleIndexes(t)) out.push({ model_id: m.id, ...m.entry(i) });
      }
      return out;
    },
    stopProducing() {
      const t = now();
      for (const m of models.values()) {
        m.generateUntil(t);
        m.stopAt(t);
      }
    },
    inject(modelId, entries, visibleAfterMs = 0) {
      const m = modelOrFail(modelId);
      const t = now();
      m.generateUntil(t);
      const parsed = entries.map((e) => {
        const p = parseEntryTime(e.time);
        if (!p) throw new RangeError(`inject: time must be ISO 8601 UTC with 0–9 fractional digits, got ${JSON.stringify(e.time)}`);
        return p;
      });
      entries.forEach((e, k) => m.inject(e, parsed[k]!.ms, parsed[k]!.ns, t + visibleAfterMs));
    },
    denyModels(modelIds) {
      denied = new Set(modelIds);
    },
    setFaults(f) {
      validateFaults(f);
      faults = { ...faults, ...f };
    },
    stats() {
      return { ...stats, faultsInjected: { ...stats.faultsInjected }, byStatus: { ...stats.byStatus } };
    },
    resetStats() {
      Object.assign(stats, emptyStats());
    },
  };
}
