//! Faults the simulated service can inject into an answer, how one is picked per request,
//! and the answers of the faults that replace the service's own; and entries served off
//! the spec, a share of them, each the same way at every read.
import type { LogEntry } from '../records/entry.js';
import { errorAnswer, type Answer } from './http.js';
import { mixSeed, type Prng } from './prng.js';

/** The kinds of fault, in the order their probabilities are stacked. */
export const FAULT_KINDS = ['error500', 'error503', 'error429', 'truncated', 'html200', 'slow'] as const;
/** One kind of injected fault. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Probabilities per request of each fault, and how the faults behave. */
export interface FaultRates {
  /** 500 with a JSON error body. */
  error500: number;
  /** 503 with `Retry-After`. */
  error503: number;
  /** 429 with `Retry-After`. */
  error429: number;
  /** Headers sent with a Content-Length larger than the body, half the body, then the socket destroyed. */
  truncated: number;
  /** 200 with an HTML body. */
  html200: number;
  /** The normal answer, after `slowMs`. */
  slow: number;
  /** Delay of a slow answer in ms. Default 2000. */
  slowMs: number;
  /** Seconds announced by `Retry-After` on 429 and 503. Default 1. */
  retryAfter: number;
  /** `Retry-After` as delta seconds, as an HTTP date, or either at random. Default `seconds`. */
  retryAfterStyle: 'seconds' | 'date' | 'mixed';
}

/** Defaults: no fault at all. */
export const NO_FAULTS: FaultRates = {
  error500: 0,
  error503: 0,
  error429: 0,
  truncated: 0,
  html200: 0,
  slow: 0,
  slowMs: 2000,
  retryAfter: 1,
  retryAfterStyle: 'seconds',
};

/**
 * Spreads one overall fault probability over the kinds, weighted toward what a real
 * service behind a proxy produces most often.
 */
export function spreadFaultRate(rate: number): Partial<FaultRates> {
  return {
    error500: rate * 0.2,
    error503: rate * 0.2,
    error429: rate * 0.2,
    truncated: rate * 0.15,
    html200: rate * 0.1,
    slow: rate * 0.15,
  };
}

/** Picks the fault of one request, or `undefined` for a normal answer. */
export function pickFault(rates: FaultRates, rng: Prng): FaultKind | undefined {
  const u = rng.next();
  let acc = 0;
  for (const k of FAULT_KINDS) {
    acc += rates[k];
    if (u < acc) return k;
  }
  return undefined;
}

/** The `Retry-After` value announcing `seconds` from `nowMs`. */
export function retryAfterValue(rates: FaultRates, nowMs: number, rng: Prng): string {
  const style = rates.retryAfterStyle === 'mixed' ? (rng.next() < 0.5 ? 'seconds' : 'date') : rates.retryAfterStyle;
  if (style === 'seconds') return String(Math.max(0, Math.round(rates.retryAfter)));
  // HTTP dates have whole seconds; rounding up keeps the announced wait at least `retryAfter`.
  return new Date(Math.ceil((nowMs + rates.retryAfter * 1000) / 1000) * 1000).toUTCString();
}

/**
 * The answer of a fault that replaces the service's (an error status, an HTML page), or
 * `undefined` for the faults that change how the service's own answer is sent (`slow`,
 * `truncated`).
 */
export function faultAnswer(kind: FaultKind, rates: FaultRates, now: () => number, rng: Prng): Answer | undefined {
  switch (kind) {
    case 'error500':
      return errorAnswer(500, 'Internal server error');
    case 'error503':
      return errorAnswer(503, 'Service temporarily unavailable', { 'retry-after': retryAfterValue(rates, now(), rng) });
    case 'error429':
      return errorAnswer(429, 'Too many requests', { 'retry-after': retryAfterValue(rates, now(), rng) });
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

/**
 * How an entry is served off the spec: `log` null or a number, `stream` a number, a `time`
 * that is no ISO 8601 time, or an array instead of an object. A share of the entries
 * (`offSpecRate`), each always served the same way ({@link offSpecKind}).
 */
export const OFF_SPEC_KINDS = ['log_null', 'log_number', 'stream_not_string', 'time_unparsable', 'not_an_object'] as const;
export type OffSpecKind = (typeof OFF_SPEC_KINDS)[number];

/** Whether the entry `seq` of a model (`seed`) is served off the spec, and how: drawn from both alone, so every read serves it alike. */
export function offSpecKind(rate: number, seed: number, seq: number): OffSpecKind | undefined {
  if (rate <= 0) return undefined;
  const h = mixSeed(seed, seq);
  return h / 4_294_967_296 < rate ? OFF_SPEC_KINDS[mixSeed(h) % OFF_SPEC_KINDS.length] : undefined;
}

/** An entry served off the spec: its JSON text, and what a reader of the spec keeps of it (api/page/json.ts) and why. */
export interface OffSpecEntry {
  json: string;
  kept: LogEntry;
  reason: 'log_not_string' | 'stream_not_string' | 'time_unparsable' | 'not_an_object';
}

/** The entry `e` (sequence number `seq`) served off the spec as `kind`. */
export function offSpecEntry(kind: OffSpecKind, e: LogEntry, seq: number): OffSpecEntry {
  const time = JSON.stringify(e.time);
  const stream = JSON.stringify(e.stream);
  const log = JSON.stringify(e.log);
  switch (kind) {
    case 'log_null':
      return { json: `{"time":${time},"log":null,"stream":${stream}}`, kept: { ...e, log: 'null' }, reason: 'log_not_string' };
    case 'log_number':
      return { json: `{"time":${time},"log":${seq},"stream":${stream}}`, kept: { ...e, log: String(seq) }, reason: 'log_not_string' };
    case 'stream_not_string':
      return { json: `{"time":${time},"log":${log},"stream":2}`, kept: { ...e, stream: '2' }, reason: 'stream_not_string' };
    case 'time_unparsable': {
      const spaced = e.time.replace('T', ' ');
      return { json: `{"time":${JSON.stringify(spaced)},"log":${log},"stream":${stream}}`, kept: { ...e, time: spaced }, reason: 'time_unparsable' };
    }
    case 'not_an_object': {
      const json = `[${time},${stream},${log}]`;
      return { json, kept: { time: '', stream: '', log: json }, reason: 'not_an_object' };
    }
  }
}
