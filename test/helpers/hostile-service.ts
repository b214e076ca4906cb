//! A fake of the model-management service on 127.0.0.1 whose logs answers a test writes
//! call by call: token cycles, endless paging, oversized pages, entries outside the
//! window, echoed headers, answers that never come. Tests of how the daemon copes with a
//! service that misbehaves in ways the simulator never does.
import type { ServerResponse } from 'node:http';
import { sendJson, startServer } from '../api/helpers.js';

/** One *get model logs* request as the fake received it. */
export interface LogsCall {
  /** 0 for the first logs request the fake received. */
  index: number;
  modelId: string;
  timeFrom: string;
  timeTo: string;
  fromMs: number;
  toMs: number;
  nextToken: string | undefined;
  authorization: string | undefined;
  /** When the request arrived (epoch ms). */
  atMs: number;
}

/** How the fake answers one call. */
export interface LogsAnswer {
  /** HTTP status (default 200). */
  status?: number;
  /** A JSON value, or a string sent as it is (default: an empty last page). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Waits this long before answering. */
  delayMs?: number;
  /** Never answers (the connection stays open until the fake closes). */
  hang?: boolean;
  /** Sends the status line and headers at once, then the body `bytes` at a time every `everyMs`. */
  trickle?: { bytes: number; everyMs: number };
}

/** Decides the answer to each logs call. */
export type Behaviour = (call: LogsCall) => LogsAnswer | Promise<LogsAnswer>;

/** A running fake service. */
export interface HostileService {
  /** `http://127.0.0.1:<port>`, the `api.base_url` to configure. */
  url: string;
  /** Every logs call so far, in arrival order. */
  calls: LogsCall[];
  close(): Promise<void>;
}

/** A log entry as the service returns it. */
export interface WireEntry {
  time: string;
  stream: string;
  log: string;
}

/** A success body: `entries` and, unless `undefined`, `next_token`. */
export function page(entries: readonly WireEntry[], nextToken?: string | null): Record<string, unknown> {
  const body: Record<string, unknown> = { status: 'success', details: entries };
  if (nextToken !== undefined) body.next_token = nextToken;
  return body;
}

/** Starts the fake. Settings updates are answered with success; logs calls go to `behaviour`. */
export async function startHostileService(behaviour: Behaviour): Promise<HostileService> {
  const calls: LogsCall[] = [];
  const server = await startServer(async (req, res: ServerResponse) => {
    if (req.url.endsWith('/rest/model/settings/update/')) {
      sendJson(res, 200, { status: 'success', details: 'updated' });
      return;
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      sendJson(res, 400, { status: 'error', details: 'body is not JSON' });
      return;
    }
    const timeFrom = String(parsed.time_from);
    const timeTo = String(parsed.time_to);
    const auth = req.headers.authorization;
    const call: LogsCall = {
      index: calls.length,
      modelId: String(parsed.model_id),
      timeFrom,
      timeTo,
      fromMs: Date.parse(timeFrom),
      toMs: Date.parse(timeTo),
      nextToken: typeof parsed.next_token === 'string' ? parsed.next_token : undefined,
      authorization: Array.isArray(auth) ? auth[0] : auth,
      atMs: Date.now(),
    };
    calls.push(call);
    const answer = await behaviour(call);
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    if (answer.hang) return;
    if (res.destroyed) return;
    if (answer.trickle) {
      await trickle(res, answer.status ?? 200, answer.body ?? page([]), answer.headers, answer.trickle);
      return;
    }
    sendJson(res, answer.status ?? 200, answer.body ?? page([]), answer.headers);
  });
  return { url: server.url, calls, close: () => server.close() };
}

/** Writes a JSON answer slowly: headers first, then the body in small pieces, until done or the client goes away. */
async function trickle(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> | undefined, pace: { bytes: number; everyMs: number }): Promise<void> {
  const text = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': text.length, ...headers });
  for (let at = 0; at < text.length && !res.destroyed; at += pace.bytes) {
    res.write(text.subarray(at, at + pace.bytes));
    await new Promise((r) => setTimeout(r, pace.everyMs));
  }
  if (!res.destroyed) res.end();
}

/** An entry at `ms` (epoch milliseconds) with text `log`. */
export function entryAt(ms: number, log: string, stream = 'stdout'): WireEntry {
  return { time: new Date(ms).toISOString(), stream, log };
}

/** The entries whose time falls in the call's window (both ends inclusive, in ms), as a faithful service returns them. */
export function entriesIn(entries: readonly WireEntry[], call: LogsCall): WireEntry[] {
  return entries.filter((e) => {
    const t = Date.parse(e.time);
    return t >= call.fromMs && t <= call.toMs;
  });
}
