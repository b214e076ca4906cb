// The crash test with processing on: the simulator writes what Python model servers write
// (tracebacks as consecutive entries) with hostile lines among them (JSON nested 10,000
// deep, 6 MB tokens, lone surrogates, lines catastrophic for backtracking), the daemon is
// SIGKILLed at random moments with groups held open, and after it drains, each file sink
// with processing (the default settings, and a sink's own RE2 drop rule that drops nothing
// but takes every line through the plain path) holds every line exactly once, each
// traceback as one record, while a `raw: true` file sink beside them holds every entry once
// as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { compareMultisets, entryKey, killRepeatedly, readNdjsonTree, readState, sleep, startMls, truthSince, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-crash-processing-4c1d';
const MODELS = ['alpha', 'beta', 'gamma'];
const KILLS = Number(process.env.MLS_CRASH_KILLS ?? 8);

let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-crash-processing-'));
  sim = await startSimulator({
    token: TOKEN,
    models: MODELS,
    content: 'python',
    ratePerSec: 60,
    historyMs: 60_000,
    // visible before the window's end (settle 300ms): no line of a traceback reaches the daemon late
    ingestDelayMs: { min: 0, max: 200 },
    pageSize: { min: 10, max: 150 },
    order: 'shuffled',
    endStyle: 'rotate',
    tokenTtlMs: 1_500,
    faults: { error500: 0.03, error503: 0.02, error429: 0.015, truncated: 0.015, html200: 0.015, slow: 0.005, slowMs: 300, retryAfter: 0 },
    hostileRate: 0.004,
    seed: 4242,
  });
});

afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Shipped {
  model_id: string;
  time: string;
  stream: string;
  log: string;
  level?: string;
  lines?: number;
  time_end?: string;
}

describe('crash safety with processing on', () => {
  it(`ships every line once and every traceback whole across ${KILLS} SIGKILLs`, { timeout: 180_000 }, async () => {
    const statePath = join(dir, 'state', 'state.db');
    const records = join(dir, 'records');
    const filtered = join(dir, 'filtered');
    const lines = join(dir, 'lines');
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}', retry: { deadline: '3s', base_delay: '20ms', max_delay: '300ms' }, timeouts: { connect: '2s', headers: '2s', body: '2s' } },
      state: { path: statePath },
      poll: { interval: '400ms', lookback: '8s', settle: '300ms', start_at: '-50s', max_window: '15s', concurrency: 4, rate_limit: 'none', jitter: 0.2, reread: { mode: 'sparse', ages: ['2s'] } },
      models: MODELS.map((id) => ({ id })),
      sinks: [
        { name: 'records', type: 'file', path: join(records, '{model_id}.ndjson'), fsync: 'batch', batch: { max_entries: 40, max_delay: '100ms' } },
        { name: 'filtered', type: 'file', path: join(filtered, '{model_id}.ndjson'), fsync: 'batch', drop: [{ match: '^(a|aa)+$' }], batch: { max_entries: 40, max_delay: '100ms' } },
        { name: 'lines', type: 'file', raw: true, path: join(lines, '{model_id}.ndjson'), fsync: 'batch', batch: { max_entries: 200, max_delay: '100ms' } },
      ],
      shutdown_timeout: '10s',
      log: { level: 'warn' },
    });
    const env = { MLS_API_TOKEN: TOKEN };
    const stderrs = await killRepeatedly(config, env, { kills: KILLS, seed: 11, minMs: 300, spreadMs: 1200 });
    const kills = stderrs.length;

    const final = startMls(['run', '--config', config], env);
    await sleep(1_000);
    sim.stopProducing();
    const stoppedAt = Date.now();
    await waitFor(() => {
      const st = readState(statePath);
      if (!st) return false;
      const settled = MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 3_000 + 8_000);
      return settled && ['records', 'filtered', 'lines'].every((sink) => st.cursors.get(sink) === st.lastSeq);
    }, 60_000, 'the daemon to fetch past the last entry and deliver every line');
    final.child.kill('SIGTERM');
    const end = await final.exited;
    expect(end.code, final.stderr()).toBe(0);

    const st = readState(statePath)!;
    const truth = truthSince(sim.groundTruth(), st.starts);
    // the raw sink: every entry once, as it was
    const raw = compareMultisets(truth.map(entryKey), readNdjsonTree(lines).map(entryKey));
    expect(raw).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });

    // The hostile lines are in the stream, of every kind.
    const kinds = (log: string) => [log.startsWith('{"a":{"a":'), log.length > 6_000_000, /^a+!$/.test(log), !log.isWellFormed() && !log.startsWith('{'), !log.isWellFormed() && log.startsWith('{')];
    const hostile = truth.filter((e) => kinds(e.log).some(Boolean));
    expect([0, 1, 2, 3, 4].filter((k) => hostile.some((e) => kinds(e.log)[k]))).toEqual([0, 1, 2, 3, 4]);
    for (const dirOf of [records, filtered]) check(readNdjsonTree(dirOf) as Shipped[]);
    expect(kills).toBe(KILLS);

    /** A sink with processing: every line once, inside some record; every traceback whole. */
    function check(shipped: Shipped[]): void {
      const lineKey = (model: string, stream: string, log: string) => JSON.stringify([model, stream, log]);
      const expanded = shipped.flatMap((r) => {
        const parts = r.log.split('\n');
        expect(parts.length, JSON.stringify(r).slice(0, 500)).toBe(r.lines ?? 1);
        return parts.map((l) => lineKey(r.model_id, r.stream, l));
      });
      const figures = compareMultisets(
        truth.map((e) => lineKey(e.model_id, e.stream, e.log)),
        expanded,
      );
      // every traceback the simulator wrote is one error record with its first and last time
      const episodes = sim.tracebackEpisodes().filter((e) => truth.some((t) => t.model_id === e.model_id && t.time === e.time));
      const grouped = new Map(shipped.filter((r) => r.lines !== undefined).map((r) => [`${r.model_id} ${r.time}`, r]));
      const whole = episodes.filter((e) => {
        const r = grouped.get(`${e.model_id} ${e.time}`);
        return r !== undefined && r.lines === e.lines && r.time_end === e.timeEnd && r.level === 'error' && r.stream === e.stream;
      });
      // A traceback not shipped whole is shown with the records that hold its lines.
      for (const e of episodes.filter((x) => !whole.includes(x))) {
        const parts = shipped.filter((r) => r.model_id === e.model_id && r.stream === e.stream && r.time >= e.time && r.time <= e.timeEnd);
        console.log(`not whole: ${JSON.stringify(e)} in ${parts.length} records: ${JSON.stringify(parts.map((r) => [r.time, r.lines ?? 1, r.log.slice(0, 40)]))}`);
      }
      const levels = new Map<string, number>();
      for (const r of shipped) levels.set(r.level ?? 'none', (levels.get(r.level ?? 'none') ?? 0) + 1);
      console.log(
        `crash test with processing: ${kills} SIGKILLs; ${figures.expected} lines produced (${hostile.length} hostile), ${shipped.length} records shipped (${JSON.stringify(Object.fromEntries(levels))}); ` +
          `lost ${figures.lost}, duplicated ${figures.duplicated}, unexpected ${figures.unexpected}; tracebacks ${whole.length}/${episodes.length} whole`,
      );
      expect(figures.expected).toBeGreaterThan(5_000);
      expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
      expect(episodes.length).toBeGreaterThan(5);
      expect(whole.length).toBe(episodes.length);
      expect(levels.get('info') ?? 0).toBeGreaterThan(0);
    }
  });
});
