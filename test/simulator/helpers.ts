//! HTTP helpers shared by the simulator tests: raw requests and whole-window fetches.
import { request } from 'undici';
import type { LogEntry } from '../../src/records/entry.js';

export const TOKEN = 'test-token-123';

/** A raw answer: status, headers and the body as text. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => any;
}

/** POSTs JSON (or a raw string) with the test token unless headers say otherwise. */
export async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}, method = 'POST'): Promise<RawAnswer> {
  const res = await request(base + path, {
    method: method as 'POST',
    headers: { 'content-type': 'application/json', authorization: TOKEN, ...headers },
    ...(method === 'GET' ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** Formats epoch ms as a request bound. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** Millisecond (truncated) of an entry time with 0–9 fractional digits. */
export function entryMs(time: string): number {
  const m = /^(.{19})(?:\.(\d{1,9}))?Z$/.exec(time);
  if (!m) throw new Error(`bad time ${time}`);
  return Date.parse(`${m[1]}Z`) + Number((m[2] ?? '').padEnd(9, '0').slice(0, 3));
}

/** Canonical 9-digit form, which sorts in time order. */
export function canonical(time: string): string {
  const m = /^(.{19})(?:\.(\d{1,9}))?Z$/.exec(time)!;
  return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}Z`;
}

/** A multiset view of entries, for exact comparison regardless of order. */
export function bag(entries: LogEntry[]): string[] {
  return entries.map((e) => JSON.stringify([canonical(e.time), e.stream, e.log, e.time])).sort();
}

/** Fetches every page of a window; `between` runs before each follow-up page. */
export async function fetchWindow(
  base: string,
  modelId: string,
  fromMs: number,
  toMs: number,
  opts: { between?: () => void | Promise<void>; isLessLogs?: boolean } = {},
): Promise<{ entries: LogEntry[]; pages: number; lastRaw: string }> {
  const entries: LogEntry[] = [];
  let token: string | undefined;
  let pages = 0;
  let lastRaw = '';
  for (;;) {
    const body: Record<string, unknown> = { model_id: modelId, time_from: iso(fromMs), time_to: iso(toMs) };
    if (opts.isLessLogs !== undefined) body.is_less_logs = opts.isLessLogs;
    if (token !== undefined) body.next_token = token;
    const res = await post(base, '/rest/model/logs/get/', body);
    if (res.status !== 200) throw new Error(`page ${pages + 1}: ${res.status} ${res.text}`);
    const j = res.json();
    pages++;
    lastRaw = res.text;
    entries.push(...j.details);
    if (j.next_token === undefined || j.next_token === null || j.next_token === '') break;
    token = j.next_token;
    await opts.between?.();
  }
  return { entries, pages, lastRaw };
}

/** A clock tests move by hand. */
export function manualClock(startMs: number): { now: () => number; advance: (ms: number) => void; set: (ms: number) => void } {
  let t = startMs;
  return { now: () => t, advance: (ms) => void (t += ms), set: (ms) => void (t = ms) };
}
