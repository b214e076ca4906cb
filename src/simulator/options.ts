//! The simulator's options, and their validation: a wrong option is refused at start with
//! its name and the accepted values.
import { FAULT_KINDS, type FaultRates } from './faults.js';

/**
 * What the simulated models write: `plain`, short service lines, a traceback sometimes within
 * one entry (the rates below); `python`, the output of a Python model server one line per
 * entry (uvicorn, logging, loguru, vLLM, JSON loggers, tracebacks as consecutive entries).
 */
export type { ContentProfile } from './content-python.js';
import type { ContentProfile } from './content-python.js';
import type { UnknownModelStatus } from './http.js';

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
  /** How a request for another model is answered: 404 `Model not found` (default) or 400 with details naming the id. */
  unknownModelStatus?: UnknownModelStatus;
  /** New entries per second per model; may be fractional or 0. */
  ratePerSec: number;
  /** Models with a rate of their own instead of `ratePerSec` (e.g. 0 for a quiet model). */
  ratePerModel?: Record<string, number>;
  /**
   * Span of entries already present at start, in ms. Default 0. Every entry is held in
   * memory, so keep `historyMs / 1000 × ratePerSec × models` below about 5 million.
   */
  historyMs?: number;
  /** Each entry becomes visible after a random delay in [min, max] ms (late arrivals). Default none. */
  ingestDelayMs?: { min: number; max: number };
  /**
   * A share of the entries (0–1) that become visible after a delay drawn from `delayMs`
   * instead of `ingestDelayMs`: a tail of late arrivals beside the usual delay. Default none.
   */
  lateArrivals?: { share: number; delayMs: { min: number; max: number } };
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
  /** What the models write. Default `plain`; the four rates below apply to `plain` only. */
  content?: ContentProfile;
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
  /**
   * Share of entries served off the spec (`log` null or a number, `stream` a number, a time
   * that is no ISO 8601 time, an array instead of an object), each the same way at every
   * read; never a line of a traceback episode. Default 0.
   */
  offSpecRate?: number;
  /**
   * Probability that an entry (of a one-line event) is a hostile line instead: a JSON object
   * nested 10,000 deep, a 6 MB token-like run, a line catastrophic for backtracking patterns,
   * a lone surrogate, a JSON line a sink cannot encode as it is. Default 0.
   */
  hostileRate?: number;
  /** Seed of every random choice (content, delays, page sizes, faults). Default random. */
  seed?: number;
  /** Epoch milliseconds; entry times and visibility follow it. Default `Date.now`. */
  clock?: () => number;
}

function checkNonNegative(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new RangeError(`${name} must be a finite number ≥ 0`);
}

function checkRate(name: string, value: number | undefined): void {
  if (value !== undefined && !(value >= 0 && value <= 1)) throw new RangeError(`${name} must be a probability in [0, 1]`);
}

/** Checks every option, naming the one that is wrong. */
export function validateOptions(o: SimulatorOptions): void {
  if (typeof o.token !== 'string' || o.token === '') throw new TypeError('token must be a non-empty string');
  if (!Array.isArray(o.models) || o.models.some((m) => typeof m !== 'string' || m === '')) {
    throw new TypeError('models must be an array of non-empty strings');
  }
  if (new Set(o.models).size !== o.models.length) throw new RangeError('models must not repeat an id');
  checkNonNegative('ratePerSec', o.ratePerSec);
  if (o.ratePerSec === undefined) throw new TypeError('ratePerSec is required');
  for (const [id, rate] of Object.entries(o.ratePerModel ?? {})) {
    if (!o.models.includes(id)) throw new RangeError(`ratePerModel names ${id}, which is not one of models`);
    checkNonNegative(`ratePerModel.${id}`, rate);
  }
  checkNonNegative('historyMs', o.historyMs);
  checkNonNegative('tokenTtlMs', o.tokenTtlMs);
  if (o.ingestDelayMs) {
    checkNonNegative('ingestDelayMs.min', o.ingestDelayMs.min);
    checkNonNegative('ingestDelayMs.max', o.ingestDelayMs.max);
    if (o.ingestDelayMs.min > o.ingestDelayMs.max) throw new RangeError('ingestDelayMs.min must not exceed ingestDelayMs.max');
  }
  if (o.lateArrivals) {
    checkRate('lateArrivals.share', o.lateArrivals.share);
    checkNonNegative('lateArrivals.delayMs.min', o.lateArrivals.delayMs?.min);
    checkNonNegative('lateArrivals.delayMs.max', o.lateArrivals.delayMs?.max);
    if (!o.lateArrivals.delayMs || o.lateArrivals.delayMs.min > o.lateArrivals.delayMs.max) throw new RangeError('lateArrivals.delayMs must be {min, max} with min ≤ max');
  }
  const ps = o.pageSize;
  if (ps !== undefined) {
    const [min, max] = typeof ps === 'number' ? [ps, ps] : [ps.min, ps.max];
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min) {
      throw new RangeError('pageSize must be an integer ≥ 1 or a range {min, max} of such integers with min ≤ max');
    }
  }
  if (o.order !== undefined && o.order !== 'sorted' && o.order !== 'shuffled') throw new RangeError("order must be 'sorted' or 'shuffled'");
  if (o.content !== undefined && o.content !== 'plain' && o.content !== 'python') throw new RangeError("content must be 'plain' or 'python'");
  if (o.endStyle !== undefined && !['absent', 'null', 'empty', 'rotate'].includes(o.endStyle)) {
    throw new RangeError("endStyle must be 'absent', 'null', 'empty' or 'rotate'");
  }
  for (const k of ['twinRate', 'multilineRate', 'unicodeRate', 'emptyRate', 'longRate', 'shortDigitsRate', 'offSpecRate', 'hostileRate'] as const) checkRate(k, o[k]);
  if (o.faults) validateFaults(o.faults);
}

/** Checks fault probabilities and behaviour (also when they change at run time). */
export function validateFaults(f: Partial<FaultRates>): void {
  for (const k of FAULT_KINDS) checkRate(`faults.${k}`, f[k]);
  checkNonNegative('faults.slowMs', f.slowMs);
  checkNonNegative('faults.retryAfter', f.retryAfter);
  if (f.retryAfterStyle !== undefined && !['seconds', 'date', 'mixed'].includes(f.retryAfterStyle)) {
    throw new RangeError("faults.retryAfterStyle must be 'seconds', 'date' or 'mixed'");
  }
}
