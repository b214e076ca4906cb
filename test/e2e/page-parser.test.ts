// Both readers of pages, seen from outside the daemon: with MLS_PAGE_PARSER unset (the
// scanner first) or `json` (every page to JSON.parse), every entry reaches the file once
// and unaltered.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, truthSince, waitFor } from './harness.js';

const TOKEN = 'tok-page-parser-3d91';
const MODELS = ['p1', 'p2'];
let dir: string;
let sim: Simulator;
let stoppedAt = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-page-parser-'));
  // Unicode, multi-line and long lines, short fractions: strings of every kind the scanner classes.
  sim = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 50, historyMs: 20_000, pageSize: 100, unicodeRate: 0.1, multilineRate: 0.1, longRate: 0.01, seed: 41 });
  sim.stopProducing();
  stoppedAt = Date.now();
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

function rawConfig(name: string) {
  const base = join(dir, name);
  return {
    api: { base_url: sim.url, token: TOKEN },
    state: { path: join(base, 'state.db') },
    poll: { interval: '1s', settle: '100ms', start_at: '-30s', max_window: '1h', rate_limit: 'none' },
    models: MODELS.map((id) => ({ id })),
    sinks: [{ name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
  };
}

/** Every model read past the end of the simulator's entries, and every entry in the file. */
function allDelivered(statePath: string): boolean {
  const st = readState(statePath);
  return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt) && st.cursors.get('files') === st.lastSeq;
}

/** The file's entries against the simulator's ground truth since each model's start. */
function shipped(name: string): ReturnType<typeof compareMultisets> {
  const st = readState(join(dir, name, 'state.db'))!;
  return compareMultisets(truthSince(sim.groundTruth(), st.starts).map(entryKey), readNdjsonTree(join(dir, name, 'out')).map(entryKey));
}

describe('the reader of pages', () => {
  it.each(['', 'json'] as const)('MLS_PAGE_PARSER=%s: every entry shipped once', { timeout: 60_000 }, async (reader) => {
    vi.stubEnv('MLS_PAGE_PARSER', reader);
    const name = reader || 'scanner';
    const config = parseConfig(rawConfig(name), { baseDir: dir, env: {} });
    const daemon = await Daemon.start({ config, logger: pino({ level: 'warn' }) });
    try {
      await waitFor(() => allDelivered(config.state.path), 40_000, 'every entry delivered');
    } finally {
      await daemon.stop();
    }
    const figures = shipped(name);
    console.log(`page reader ${name}: entries ${JSON.stringify(figures)}`);
    expect(figures.expected).toBeGreaterThan(1_000);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});
