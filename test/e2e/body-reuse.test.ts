// Response bodies are collected into buffers the poller gives back once each page is
// committed. Over many pages, several models and concurrent requests, every entry reaches
// the file sink exactly once and unaltered: no page's bytes were reused while still needed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { BodyPool } from '../../src/api/body-pool.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, truthSince, waitFor } from './harness.js';

const TOKEN = 'tok-body-reuse-7c21';
const MODELS = ['r1', 'r2', 'r3', 'r4'];
let dir: string;
let sim: Simulator;
let stoppedAt = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-body-reuse-'));
  sim = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 100, historyMs: 60_000, pageSize: 100, seed: 23 });
  sim.stopProducing();
  stoppedAt = Date.now();
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('reused response buffers', () => {
  it('deliver every entry of many pages once and unaltered', { timeout: 60_000 }, async () => {
    const config = parseConfig(
      {
        api: { base_url: sim.url, token: TOKEN },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '1s', settle: '100ms', start_at: '-70s', max_window: '1h', rate_limit: 'none', concurrency: 4 },
        models: MODELS.map((id) => ({ id })),
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    const bodies = new BodyPool({ minBufferBytes: 1024 });
    const daemon = await Daemon.start({ config, logger: pino({ level: 'warn' }), bodies });
    try {
      await waitFor(() => {
        const st = readState(config.state.path);
        return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt) && st.cursors.get('files') === st.lastSeq;
      }, 40_000, 'every entry delivered');
    } finally {
      await daemon.stop();
    }
    const st = readState(config.state.path)!;
    const figures = compareMultisets(truthSince(sim.groundTruth(), st.starts).map(entryKey), readNdjsonTree(join(dir, 'out')).map(entryKey));
    expect(figures.expected).toBeGreaterThan(20_000);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    // Most pages were read into a buffer an earlier page had given back.
    expect(bodies.reused).toBeGreaterThan(figures.expected / 100 / 2);
  });
});
