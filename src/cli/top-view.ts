//! One frame of `mls top`: the running daemon's `/status` as a table of models and a table
//! of sinks, rows in trouble (an error, a pause, a growing backlog) first unless another
//! order was asked for.
import Table from 'cli-table3';
import type { DaemonStatus } from '../daemon/status.js';
import { formatDuration } from '../time/duration.js';

/** The orders `s` cycles through. */
export const SORTS = ['trouble', 'name', 'rate'] as const;
export type Sort = (typeof SORTS)[number];

type ModelRow = DaemonStatus['models'][number];
type SinkRow = DaemonStatus['sinks'][number];

/** What a frame shows besides the status. */
export interface FrameInfo {
  source: string;
  sort: Sort;
  /** The keys line, in the live view. */
  keys?: boolean;
  /** Why the status could not be read this time (the last one read is shown). */
  problem?: string;
}

/** Renders a frame. */
export function renderFrame(st: DaemonStatus, info: FrameInfo): string {
  const full = st.journal.full === true;
  const window = st.ratesWindowSeconds === undefined ? 'no rates (the daemon is older than mls top)' : `rates over the last ${st.ratesWindowSeconds} s`;
  const models = sorted(st.models, info.sort, (m) => m.lastError !== undefined || m.paused === true || full, (m) => m.entriesPerSecond ?? 0).map((m) => [
    m.id,
    rate(m.entriesPerSecond),
    formatDuration(m.lagSeconds * 1000),
    rate(m.requestsPerMinute),
    m.paused ? 'paused' : full ? 'blocked' : 'polling',
    short(m.lastError),
  ]);
  const sinks = sorted(st.sinks, info.sort, (s) => s.lastError !== undefined || (s.backlogPerSecond ?? 0) > 0, (s) => s.recordsPerSecond ?? 0).map((s) => [
    s.name,
    s.type,
    rate(s.recordsPerSecond),
    `${s.backlogEntries}${(s.backlogPerSecond ?? 0) > 0 ? ' (growing)' : ''}`,
    String(s.inFlightEntries ?? '-'),
    String(s.retries ?? '-'),
    String(s.deadLetters),
    short(s.lastError),
  ]);
  return [
    `mls top · ${info.source} · ${window} · journal ${st.journal.entries} entries${full ? ' (full: polling waits)' : ''}`,
    ...(info.problem === undefined ? [] : [`(${info.problem}; showing the last status read)`]),
    table(['MODEL', 'ENTRIES/S', 'LAG', 'REQUESTS/MIN', 'STATE', 'LAST ERROR'], models),
    table(['SINK', 'TYPE', 'RECORDS/S', 'BACKLOG (ENTRIES)', 'IN FLIGHT', 'RETRIES', 'DEAD LETTERS', 'LAST ERROR'], sinks),
    ...(info.keys ? [`sorted by ${info.sort === 'trouble' ? 'trouble first' : info.sort} · s: sort by ${SORTS[(SORTS.indexOf(info.sort) + 1) % SORTS.length]} · q: quit`] : []),
  ].join('\n');
}

function sorted<T extends ModelRow | SinkRow>(rows: readonly T[], sort: Sort, troubled: (r: T) => boolean, rateOf: (r: T) => number): T[] {
  const name = (r: T) => ('id' in r ? r.id : r.name);
  return [...rows].sort((a, b) => {
    if (sort === 'trouble' && troubled(a) !== troubled(b)) return troubled(a) ? -1 : 1;
    if (sort === 'rate' && rateOf(a) !== rateOf(b)) return rateOf(b) - rateOf(a);
    return name(a).localeCompare(name(b));
  });
}

function table(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  t.push(...rows);
  return t.toString();
}

function rate(n: number | undefined): string {
  return n === undefined ? '-' : n.toFixed(1);
}

function short(text: string | undefined): string {
  if (text === undefined) return '';
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
