// Wall-clock jumps of an hour, forwards and backwards, while the daemon runs and across a
// restart: nothing is lost or duplicated. The test controls the daemon's wall clock; the
// machine's clock is never touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { steadyClock } from '../../src/time/clock.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, sleep, truthSince, waitFor } from './harness.js';

const TOKEN = 'tok-clock-test-0c4d11';
const HOUR = 3_600_000;
let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-clock-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 30, historyMs: 10_000, ingestDelayMs: { min: 0, max: 1_000 }, seed: 9 });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('wall-clock jumps', () => {
  it('an hour forwards and backwards, while running and across a restart, loses and duplicates nothing', { timeout: 90_000 }, async () => {
    let offset = 0;
    const steps: number[] = [];
    const logs: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(line) });
    const config = parseConfig(
      {
        api: { base_url: sim.url, token: TOKEN },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '300ms', lookback: '3s', settle: '100ms', start_at: '-8s', max_window: '1m', rate_limit: 'none', reread: { ages: ['1s'] } },
        models: [{ id: 'm1' }, { id: 'm2' }],
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    const start = (wall: () => number) => Daemon.start({ config, logger, clock: steadyClock({ wall, onStep: (d) => steps.push(d) }) });

    // 1. while running: +1h for 2 s, back, then -1h for 2 s, back
    let daemon = await start(() => Date.now() + offset);
    await sleep(1_500);
    offset = HOUR;
    await sleep(2_000);
    offset = 0;
    await sleep(1_500);
    offset = -HOUR;
    await sleep(2_000);
    offset = 0;
    await sleep(1_500);
    await daemon.stop();
    expect(steps.some((d) => d > HOUR * 0.9)).toBe(true);
    expect(steps.some((d) => d < -HOUR * 0.9)).toBe(true);

    // 2. restart with the clock an hour behind: the daemon waits (no window), skips nothing
    daemon = await start(() => Date.now() - HOUR);
    await sleep(2_000);
    await daemon.stop();
    expect(logs.some((l) => l.includes('the clock is behind'))).toBe(true);

    // 3. restart with the clock right again: it catches up
    daemon = await start(() => Date.now());
    await sleep(1_000);
    sim.stopProducing();
    const stoppedAt = Date.now();
    await waitFor(() => {
      const st = readState(config.state.path);
      return !!st && ['m1', 'm2'].every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 4_500) && st.cursors.get('files') === st.lastSeq;
    }, 30_000, 'catch-up and drain');
    await daemon.stop();

    const st = readState(config.state.path)!;
    const truth = truthSince(sim.groundTruth(), st.starts);
    const figures = compareMultisets(truth.map(entryKey), readNdjsonTree(join(dir, 'out')).map(entryKey));
    console.log(`clock test: produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}`);
    expect(figures.expected).toBeGreaterThan(500);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});
