// The daemon is SIGKILLed at random moments while the simulator injects faults, late
// arrivals, shuffled pages, random page sizes and expiring tokens. After it drains, the
// file sink must hold every entry of the simulator's ground truth exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { compareMultisets, entryKey, killRepeatedly, readNdjsonTree, readState, sleep, startMls, truthSince, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-crash-test-7f3a9c';
const MODELS = ['alpha', 'beta', 'gamma'];
const KILLS = Number(process.env.MLS_CRASH_KILLS ?? 12);

let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-crash-'));
  sim = await startSimulator({
    token: TOKEN,
    models: MODELS,
    ratePerSec: 40,
    historyMs: 60_000,
    ingestDelayMs: { min: 0, max: 3_000 },
    pageSize: { min: 10, max: 150 },
    order: 'shuffled',
    endStyle: 'rotate',
    tokenTtlMs: 1_500,
    twinRate: 0.03,
    multilineRate: 0.03,
    unicodeRate: 0.05,
    emptyRate: 0.01,
    longRate: 0.005,
    faults: { error500: 0.03, error503: 0.02, error429: 0.015, truncated: 0.015, html200: 0.015, slow: 0.005, slowMs: 300, retryAfter: 0 },
    seed: 42,
  });
});

afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('crash safety of the file sink', () => {
  it(`loses and duplicates nothing across ${KILLS} SIGKILLs`, { timeout: 180_000 }, async () => {
    const statePath = join(dir, 'state', 'state.db');
    const outDir = join(dir, 'out');
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}', retry: { deadline: '3s', base_delay: '20ms', max_delay: '300ms' }, timeouts: { connect: '2s', headers: '2s', body: '2s' } },
      state: { path: statePath },
      poll: { interval: '400ms', lookback: '8s', settle: '300ms', start_at: '-50s', max_window: '15s', concurrency: 4, rate_limit: 'none', jitter: 0.2, reread: { mode: 'sparse', ages: ['2s'] } },
      models: MODELS.map((id) => ({ id })),
      sinks: [{ name: 'archive', type: 'file', path: join(outDir, '{model_id}', '%Y-%m-%d-%H.ndjson'), fsync: 'batch', batch: { max_entries: 200, max_delay: '100ms' } }],
      shutdown_timeout: '10s',
      log: { level: 'warn' },
    });
    const env = { MLS_API_TOKEN: TOKEN };
    const stderrs = await killRepeatedly(config, env, { kills: KILLS, seed: 7, minMs: 250, spreadMs: 1200 });
    const kills = stderrs.length;
    for (const err of stderrs) expect(err).not.toContain(TOKEN);

    // Final run: stop producing, let the daemon read past the last late arrival, then stop it cleanly.
    const final = startMls(['run', '--config', config], env);
    await sleep(1_000);
    sim.stopProducing();
    const stoppedAt = Date.now();
    await waitFor(() => {
      const st = readState(statePath);
      if (!st) return false;
      const settled = MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 3_500 + 8_000);
      return settled && st.cursors.get('archive') === st.lastSeq;
    }, 60_000, 'the daemon to fetch past the last late arrival and drain the journal');
    final.child.kill('SIGTERM');
    const end = await final.exited;
    expect(end.code, final.stderr()).toBe(0);
    expect(final.stderr()).not.toContain(TOKEN);

    const st = readState(statePath)!;
    const truth = truthSince(sim.groundTruth(), st.starts);
    const shipped = readNdjsonTree(outDir);
    const figures = compareMultisets(truth.map(entryKey), shipped.map(entryKey));
    const stats = sim.stats();
    console.log(
      `crash test: ${kills} SIGKILLs; produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}, unexpected ${figures.unexpected}; ` +
        `simulator answered ${stats.logsRequests} logs requests with ${JSON.stringify(stats.faultsInjected)} faults`,
    );
    expect(kills).toBe(KILLS);
    expect(figures.expected).toBeGreaterThan(5_000);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});
