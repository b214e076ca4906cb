//! The *get model logs* operation of the simulated service: consistent paging over a
//! snapshot taken at the first page (a token carries it), expiring tokens, pages of a fixed
//! or random size in time order or shuffled, and the three ways the spec allows to say that
//! no more pages remain.
import type { IncomingMessage } from 'node:http';
import { checkRequest, errorAnswer, type Answer } from './http.js';
import type { ResolvedOptions } from './options.js';
import type { Prng } from './prng.js';
import type { SimulatorStats } from './stats.js';
import type { ModelLog, Snapshot } from './store.js';
import { parseRequestTime } from './timefmt.js';
import type { TokenCodec } from './token.js';

const TIME_FORMAT_HINT = 'an ISO 8601 UTC timestamp with milliseconds, like 2024-05-01T10:00:00.000Z';

/** What the logs operation works with. */
export interface LogsEndpointOptions {
  /** The token, pages (size, order, end style), token lifetime and how unknown models are answered. */
  options: ResolvedOptions;
  models: ReadonlyMap<string, ModelLog>;
  /** The status (401 or 403) answered for a model the token has lost access to; undefined for the others. */
  denied(modelId: string): 401 | 403 | undefined;
  now(): number;
  codec: TokenCodec;
  /** Draws page sizes and shuffles. */
  pageRng: Prng;
  stats: SimulatorStats;
}

/** The *get model logs* operation; one per simulator (it counts the pages that ended a fetch). */
export class LogsEndpoint {
  /** Pages that ended a fetch, for `endStyle: rotate`. */
  #ends = 0;

  constructor(private readonly o: LogsEndpointOptions) {}

  /** Answers one request whose body is `raw`. */
  answer(req: IncomingMessage, raw: string): Answer {
    const o = this.o;
    const { pageSize, order, endStyle } = o.options;
    const request = checkRequest(req, raw, o.options, o.models);
    if ('status' in request) return request;
    const { body, model } = request;
    const denied = o.denied(model.id);
    if (denied !== undefined) return errorAnswer(denied, denied === 401 ? 'Invalid token' : 'The token has no access to this model');
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

    const t = o.now();
    model.generateUntil(t);
    let snap: Snapshot;
    let start: number;
    if (typeof tok === 'string' && tok !== '') {
      const cur = o.codec.decode(tok);
      if (!cur) return errorAnswer(400, 'invalid next_token');
      if (cur.modelId !== model.id || cur.fromMs !== fromMs || cur.toMs !== toMs) {
        return errorAnswer(400, 'next_token does not belong to this model and time window');
      }
      if (t - cur.issuedAt > o.options.tokenTtlMs) return errorAnswer(400, 'next_token expired');
      snap = { time: cur.snapTime, seq: cur.snapSeq };
      start = model.afterKey(...cur.after);
    } else {
      snap = { time: t, seq: model.nextSeq };
      start = model.lowerBoundMs(fromMs);
    }
    let size = pageSize.min === pageSize.max ? pageSize.min : o.pageRng.int(pageSize.min, pageSize.max);
    if (less === true) size = Math.max(1, Math.floor(size / 4));
    const { indexes, more } = model.slice(start, toMs, snap, size);

    let tail: string;
    let endAdvance = 0;
    if (more) {
      const token = o.codec.encode({ modelId: model.id, fromMs, toMs, snapTime: snap.time, snapSeq: snap.seq, after: model.key(indexes[indexes.length - 1]!), issuedAt: t });
      tail = `,"next_token":"${token}"}`;
    } else {
      const style = endStyle === 'rotate' ? (['absent', 'null', 'empty'] as const)[this.#ends % 3]! : endStyle;
      if (endStyle === 'rotate') endAdvance = 1;
      tail = style === 'absent' ? '}' : style === 'null' ? ',"next_token":null}' : ',"next_token":""}';
    }
    const served = order === 'shuffled' ? this.#shuffle(indexes.slice()) : indexes;
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
        o.stats.entriesServed += indexes.length;
        o.stats.logsAnswersByModel[model.id] = (o.stats.logsAnswersByModel[model.id] ?? 0) + 1;
        const whole = model.markServed(indexes);
        if (whole > 0) o.stats.tracebacksServed[model.id] = (o.stats.tracebacksServed[model.id] ?? 0) + whole;
        if (less === true) o.stats.lessLogsRequests++;
        this.#ends += endAdvance;
      },
    };
  }

  #shuffle(a: number[]): number[] {
    const rng = this.o.pageRng;
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      const x = a[i]!;
      a[i] = a[j]!;
      a[j] = x;
    }
    return a;
  }
}
