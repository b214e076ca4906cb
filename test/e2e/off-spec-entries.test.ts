// Entries served off the spec (log null or a number, stream a number, a time that is no
// time, an array instead of an object) among valid ones, with processing on: none stops its
// page; each is shipped once with its fields as text however often its span is read, and
// counted once in mls_entries_invalid_total; every valid entry is shipped once. The same
// holds across SIGKILLs, with faults, shuffled pages and expiring tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { compareMultisets, entryKey, killRepeatedly, readNdjsonTree, readState, sleep, startMls, truthSince, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-off-spec-91e2';
const MODELS = ['o1', 'o2', 'o3'];
const KILLS = Number(process.env.MLS_CRASH_KILLS ?? 8);
const REASONS = ['log_not_string', 'stream_not_string', 'time_unparsable', 'not_an_object'];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-off-spec-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two file sinks: one raw, one with processing (the default). */
function sinks(base: string) {
  return [
    { name: 'records', type: 'file', path: join(base, 'records', '{model_id}.ndjson'), fsync: 'batch', batch: { max_entries: 40, max_delay: '50ms' } },
    { name: 'lines', type: 'file', raw: true, path: join(base, 'lines', '{model_id}.ndjson'), fsync: 'batch', batch: { max_entries: 200, max_delay: '50ms' } },
  ];
}

/** The two sinks against the ground truth: the raw one entry by entry, the processed one line by line inside its records. */
function compare(sim: Simulator, base: string, statePath: string) {
  const truth = truthSince(sim.groundTruth(), readState(statePath)!.starts);
  const raw = compareMultisets(truth.map(entryKey), readNdjsonTree(join(base, 'lines')).map(entryKey));
  const lineKey = (model: string, stream: string, log: string) => JSON.stringify([model, stream, log]);
  const records = readNdjsonTree(join(base, 'records')).flatMap((r) => r.log.split('\n').map((l) => lineKey(r.model_id, r.stream, l)));
  const processed = compareMultisets(
    truth.map((e) => lineKey(e.model_id, e.stream, e.log)),
    records,
  );
  const offSpec = new Map<string, number>();
  for (const e of truth) if (e.off_spec) offSpec.set(e.off_spec.reason, (offSpec.get(e.off_spec.reason) ?? 0) + 1);
  return { truth, raw, processed, offSpec };
}

/** Every model read past its last entry by more than the lookback, and every line delivered to both sinks. */
function drained(statePath: string, afterMs: number): boolean {
  const st = readState(statePath);
  return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > afterMs) && st.cursors.get('records') === st.lastSeq && st.cursors.get('lines') === st.lastSeq;
}

describe('entries off the spec', () => {
  it('are shipped once each however often their span is read, and counted once per reason', { timeout: 60_000 }, async () => {
    const sim = await startSimulator({ token: TOKEN, models: MODELS, content: 'python', ratePerSec: 40, historyMs: 5_000, pageSize: { min: 20, max: 120 }, order: 'shuffled', offSpecRate: 0.08, seed: 17 });
    try {
      const base = join(dir, 'in-process');
      const config = parseConfig(
        {
          api: { base_url: sim.url, token: TOKEN },
          state: { path: join(base, 'state.db') },
          // Spans read again at 1 s and 3 s, and at the lookback, by windows that start elsewhere.
          // (A model's first lines, its start-up, become visible together, up to 6 s late.)
          poll: { interval: '300ms', lookback: '8s', settle: '100ms', start_at: '-35s', max_window: '10s', rate_limit: 'none', reread: { mode: 'sparse', ages: ['1s', '3s'] } },
          models: MODELS.map((id) => ({ id })),
          sinks: sinks(base),
        },
        { baseDir: dir, env: {} },
      );
      const metrics = new Metrics({ processMetrics: false });
      const daemon = await Daemon.start({ config, logger: pino({ level: 'error' }), metrics });
      let stoppedAt = Infinity;
      try {
        // Entries written while the daemon polls: each span is read again at every age.
        await sleep(6_000);
        sim.stopProducing();
        stoppedAt = Date.now();
        await waitFor(() => drained(config.state.path, stoppedAt + 9_000), 40_000, 'every span read at the lookback and every line delivered');
      } finally {
        await daemon.stop();
      }
      const { truth, raw, processed, offSpec } = compare(sim, base, config.state.path);
      const text = await metrics.text();
      const counted = new Map<string, number>();
      for (const m of text.matchAll(/^mls_entries_invalid_total\{model="\w+",reason="(\w+)"\} (\d+)$/gm)) counted.set(m[1]!, (counted.get(m[1]!) ?? 0) + Number(m[2]));
      let duplicates = 0;
      for (const m of text.matchAll(/^mls_duplicates_dropped_total\{model="\w+"\} (\d+)$/gm)) duplicates += Number(m[1]);
      console.log(`off-spec entries: ${truth.length} entries, off the spec ${JSON.stringify(Object.fromEntries(offSpec))}, counted ${JSON.stringify(Object.fromEntries(counted))}, duplicates dropped ${duplicates}; raw ${JSON.stringify(raw)}; processed ${JSON.stringify(processed)}`);
      expect(raw).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
      expect(processed).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
      expect([...offSpec.keys()].sort()).toEqual([...REASONS].sort());
      expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(offSpec));
      // The spans were read again: what was delivered before was recognised.
      expect(duplicates).toBeGreaterThan(truth.length);
    } finally {
      await sim.close();
    }
  });

  it(`are shipped once each, and every valid entry once, across ${KILLS} SIGKILLs`, { timeout: 180_000 }, async () => {
    const sim = await startSimulator({
      token: TOKEN,
      models: MODELS,
      content: 'python',
      ratePerSec: 60,
      historyMs: 60_000,
      ingestDelayMs: { min: 0, max: 200 },
      pageSize: { min: 10, max: 150 },
      order: 'shuffled',
      endStyle: 'rotate',
      tokenTtlMs: 1_500,
      offSpecRate: 0.03,
      faults: { error500: 0.03, error503: 0.02, error429: 0.015, truncated: 0.015, html200: 0.015, slow: 0.005, slowMs: 300, retryAfter: 0 },
      seed: 4343,
    });
    try {
      const base = join(dir, 'crash');
      const statePath = join(base, 'state', 'state.db');
      const config = writeConfig(
        dir,
        {
          api: { base_url: sim.url, token: '${MLS_API_TOKEN}', retry: { deadline: '3s', base_delay: '20ms', max_delay: '300ms' }, timeouts: { connect: '2s', headers: '2s', body: '2s' } },
          state: { path: statePath },
          poll: { interval: '400ms', lookback: '8s', settle: '300ms', start_at: '-50s', max_window: '15s', concurrency: 4, rate_limit: 'none', jitter: 0.2, reread: { mode: 'sparse', ages: ['2s'] } },
          models: MODELS.map((id) => ({ id })),
          sinks: sinks(base),
          shutdown_timeout: '10s',
          log: { level: 'error' },
        },
        'crash.yaml',
      );
      const env = { MLS_API_TOKEN: TOKEN };
      const kills = (await killRepeatedly(config, env, { kills: KILLS, seed: 29, minMs: 300, spreadMs: 1200 })).length;
      const final = startMls(['run', '--config', config], env);
      await sleep(1_000);
      sim.stopProducing();
      const stoppedAt = Date.now();
      await waitFor(() => drained(statePath, stoppedAt + 3_000 + 8_000), 60_000, 'the daemon to fetch past the last entry and deliver every line');
      final.child.kill('SIGTERM');
      expect((await final.exited).code, final.stderr()).toBe(0);
      const { truth, raw, processed, offSpec } = compare(sim, base, statePath);
      console.log(`off-spec entries across ${kills} SIGKILLs: ${truth.length} entries, off the spec ${JSON.stringify(Object.fromEntries(offSpec))}; raw ${JSON.stringify(raw)}; processed ${JSON.stringify(processed)}`);
      expect(kills).toBe(KILLS);
      expect(truth.length).toBeGreaterThan(5_000);
      expect([...offSpec.keys()].sort()).toEqual([...REASONS].sort());
      expect(raw).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
      expect(processed).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    } finally {
      await sim.close();
    }
  });
});
