//! What `mls logs` does: prints the logs of one model for a time window, or follows them.
//! Follow mode re-reads a small overlap on every poll and prints each line once, counting
//! occurrences so that two genuine identical lines both print.
import { WINDOW_LIMITS_DEFAULTS } from '../config/defaults.js';
import { WindowGuard, type WindowLimits } from '../poller/window-guard.js';
import { ApiClientError, ApiError } from '../api/errors.js';
import type { ApiClient } from '../api/types.js';
import { UsageError } from '../errors.js';
import { formatDuration, parseDuration } from '../time/duration.js';
import { msToNs, nsToMs, nsToMsCeil, parseEntryTime } from '../time/timestamp.js';
import { sleepOrAbort as sleep } from '../time/backoff.js';
import { OccurrenceFilter } from './occurrence-filter.js';
import { processedOutput, rawOutput, type LogsFormat, type LogsOutput } from './logs-output.js';
import { interruption, OutputClosedError, OutputWriter, refuseTokenFlag, resolveConnection, type CommandIo } from './common.js';
import { DEFAULT_SINCE, type LogsCliOptions } from './logs.js';

/** Each follow poll re-reads at least this much before the previous `to`, for late lines. */
const MIN_FOLLOW_OVERLAP_MS = 10_000;
/** Bounds of one window's paging: the daemon's defaults (`poll.window_limits`). */
const LOGS_WINDOW_LIMITS: WindowLimits = { maxPages: WINDOW_LIMITS_DEFAULTS.max_pages, maxDurationMs: parseDuration(WINDOW_LIMITS_DEFAULTS.max_duration)! };

/** Times a window restarts after the service rejected its continuation token. */
const MAX_TOKEN_RESTARTS = 3;
const TOKEN_REJECTED_STATUSES = new Set([400, 404, 410]);

/**
 * Parses a `--from`/`--to` value: an entry-style timestamp (exact), a date `YYYY-MM-DD`
 * (midnight UTC), a timestamp without seconds but with a zone, or `now`.
 * Returns nanoseconds, or `undefined`.
 */
export function parseCliTime(text: string, nowMs: number): bigint | undefined {
  const s = text.trim();
  if (s === 'now') return msToNs(nowMs);
  const exact = parseEntryTime(s);
  if (exact.ok) return exact.ns;
  // Zone required: Date.parse would read a time without one as local time.
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(Z|[+-]\d{2}:\d{2}))?$/.test(s)) return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : msToNs(ms);
}

interface Plan {
  modelId: string;
  fromMs: number;
  /** `undefined` when following. */
  toMs: number | undefined;
  intervalMs: number;
  format: LogsFormat;
  isLessLogs: boolean | undefined;
}

function plan(opts: LogsCliOptions, nowMs: number): Plan {
  const modelId = opts.model.trim();
  if (modelId === '') throw new UsageError('--model: expected a model id');
  const format = opts.output;
  if (format !== 'ndjson' && format !== 'text') throw new UsageError(`--output: expected ndjson or text, got ${JSON.stringify(format)}`);
  const follow = opts.follow === true;
  const intervalMs = parseDuration(opts.interval);
  if (intervalMs === undefined || intervalMs < 100) {
    throw new UsageError(`--interval: expected a duration of at least 100ms such as 2s, got ${JSON.stringify(opts.interval)}`);
  }
  if (opts.since !== undefined && (opts.from !== undefined || opts.to !== undefined)) {
    throw new UsageError('--since cannot be combined with --from or --to');
  }
  if (follow && opts.to !== undefined) throw new UsageError('--follow has no end: leave out --to');
  if (opts.to !== undefined && opts.from === undefined) throw new UsageError('--to needs --from');

  let fromMs: number;
  let toMs: number | undefined;
  if (opts.from !== undefined) {
    const from = parseCliTime(opts.from, nowMs);
    if (from === undefined) throw new UsageError(`--from: expected a time such as 2024-05-01T12:00:00Z, got ${JSON.stringify(opts.from)}`);
    fromMs = nsToMs(from);
    if (!follow) {
      const to = opts.to === undefined ? msToNs(nowMs) : parseCliTime(opts.to, nowMs);
      if (to === undefined) throw new UsageError(`--to: expected a time such as 2024-05-01T13:00:00Z, got ${JSON.stringify(opts.to)}`);
      toMs = nsToMsCeil(to);
      if (toMs <= fromMs) throw new UsageError('--to must be later than --from');
    }
  } else {
    const sinceText = opts.since ?? DEFAULT_SINCE;
    const sinceMs = parseDuration(sinceText);
    if (sinceMs === undefined || sinceMs <= 0) throw new UsageError(`--since: expected a positive duration such as 15m, got ${JSON.stringify(sinceText)}`);
    fromMs = nowMs - sinceMs;
    toMs = follow ? undefined : nowMs;
  }
  return { modelId, fromMs, toMs, intervalMs, format, isLessLogs: opts.lessLogs === true ? true : undefined };
}

/**
 * Fetches every page of one window and prints the lines the filter admits. A rejected
 * continuation token restarts the window from its start; the filter keeps the restart
 * from printing anything twice.
 */
async function fetchWindow(
  client: ApiClient,
  p: Plan,
  fromMs: number,
  toMs: number,
  filter: OccurrenceFilter,
  output: LogsOutput,
  out: OutputWriter,
  io: CommandIo,
  signal: AbortSignal | undefined,
): Promise<void> {
  const minNs = msToNs(fromMs);
  const fallbackNs = msToNs(toMs);
  for (let restarts = 0; ; restarts++) {
    filter.beginFetch();
    const guard = new WindowGuard(undefined, LOGS_WINDOW_LIMITS);
    let token: string | undefined;
    try {
      for (;;) {
        const page = await client.getLogs(
          { modelId: p.modelId, fromMs, toMs, ...(p.isLessLogs !== undefined ? { isLessLogs: p.isLessLogs } : {}), ...(token !== undefined ? { nextToken: token } : {}) },
          signal,
        );
        await out.write(output.page(page.entries.filter((e) => filter.admit(e, minNs, fallbackNs)), toMs));
        // A token followed before in this window (A → B → A …) would loop forever, printing the same pages again.
        const verdict = guard.check(page.nextToken);
        if (verdict.kind === 'end') return;
        if (verdict.kind === 'cycle') {
          io.stderr.write(`mls: the service's next_token came back to one already followed in this window (a cycle of ${verdict.length} page${verdict.length === 1 ? '' : 's'}); the window ends here\n`);
          return;
        }
        if (verdict.kind === 'limit') {
          io.stderr.write(`mls: the service was still paging after ${guard.pagesRead} pages (${verdict.reason === 'max_pages' ? `${LOGS_WINDOW_LIMITS.maxPages} pages` : formatDuration(LOGS_WINDOW_LIMITS.maxDurationMs)}) for one window; the window ends here\n`);
          return;
        }
        token = page.nextToken;
      }
    } catch (err) {
      const tokenRejected = token !== undefined && err instanceof ApiClientError && err.status !== undefined && TOKEN_REJECTED_STATUSES.has(err.status);
      if (!tokenRejected || restarts >= MAX_TOKEN_RESTARTS) throw err;
      io.stderr.write(`mls: the service rejected the continuation token (HTTP ${err.status}); reading the window again from its start\n`);
    }
  }
}

/** Runs `mls logs` with parsed options. Resolves when done; failures are thrown. */
export async function runLogs(opts: LogsCliOptions, io: CommandIo): Promise<void> {
  refuseTokenFlag(opts);
  const p = plan(opts, Date.now());
  const { api, config } = await resolveConnection(opts, io.env);
  const client = (await import('../api/client.js')).createApiClient(api);
  const out = new OutputWriter(io.stdout);
  const filter = new OccurrenceFilter();
  const output = opts.process ? processedOutput(p.modelId, p.format, config?.processing) : rawOutput(p.modelId, p.format);
  try {
    if (p.toMs !== undefined) {
      await fetchWindow(client, p, p.fromMs, p.toMs, filter, output, out, io, undefined);
    } else {
      await follow(client, p, filter, output, out, io);
    }
    await out.write(output.end());
  } catch (err) {
    if (err instanceof OutputClosedError) return;
    throw err;
  } finally {
    out.release();
    await client.close();
  }
}

async function follow(client: ApiClient, p: Plan, filter: OccurrenceFilter, output: LogsOutput, out: OutputWriter, io: CommandIo): Promise<void> {
  const { signal, release } = interruption(io);
  const overlapMs = Math.max(MIN_FOLLOW_OVERLAP_MS, 2 * p.intervalMs);
  let fromMs = p.fromMs;
  let failing = false;
  try {
    while (!signal.aborted) {
      const toMs = Date.now();
      if (toMs > fromMs) {
        try {
          await fetchWindow(client, p, fromMs, toMs, filter, output, out, io, signal);
          await out.write(output.advance(toMs));
          if (failing) io.stderr.write('mls: the service answers again\n');
          failing = false;
          fromMs = Math.max(p.fromMs, toMs - overlapMs);
          filter.prune(msToNs(fromMs));
        } catch (err) {
          if (signal.aborted) break;
          // Following outlives a bad minute of the service; a refused token or request does not.
          if (!(err instanceof ApiError) || !err.retryable) throw err;
          if (!failing) io.stderr.write(`mls: ${err.message}; still trying every ${formatDuration(p.intervalMs)}\n`);
          failing = true;
        }
      }
      // The sleep rejects only when --follow is stopped (Ctrl-C), which ends the loop.
      await sleep(p.intervalMs, signal).catch(() => undefined);
    }
  } finally {
    release();
  }
}
