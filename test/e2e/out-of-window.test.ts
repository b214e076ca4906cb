// The service may return entries outside the window asked for. One dated an hour before every
// window, returned with each of them, must reach the file once, however often the dedupe keys
// are pruned; the keys of ordinary entries must still be pruned as soon as no window can
// reach them. The daemon runs in-process and prunes after every window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import Database from 'better-sqlite3';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { page, startHostileService, type HostileService, type WireEntry } from '../helpers/hostile-service.js';
import { readNdjsonTree, readState, sleep, waitFor } from './harness.js';

const TOKEN = 'tok-stray-test-7a2c';
const STEP_MS = 250;
let dir: string;
let service: HostileService;
const startedAt = Date.now();
const stray: WireEntry = { time: new Date(startedAt - 3_600_000).toISOString(), stream: 'stdout', log: 'returned with every window' };

/** The model's real entries: one every 250 ms, up to now, inside the window asked for. */
function inside(fromMs: number, toMs: number): WireEntry[] {
  const out: WireEntry[] = [];
  const end = Math.min(toMs, Date.now());
  for (let t = Math.ceil(fromMs / STEP_MS) * STEP_MS; t <= end; t += STEP_MS) out.push({ time: new Date(t).toISOString(), stream: 'stdout', log: `entry ${t}` });
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-stray-'));
  service = await startHostileService((call) => ({ body: page([stray, ...inside(call.fromMs, call.toMs)]) }));
});
afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an entry dated before the window', () => {
  it('is delivered once across many windows and prunings, while in-window keys are still pruned', { timeout: 60_000 }, async () => {
    const lookbackMs = 2_000;
    const config = parseConfig(
      {
        api: { base_url: service.url, token: TOKEN },
        state: { path: join(dir, 'state.db') },
        // Catch-up windows of 20 s, ten times the lookback: the first one used to prune the stray's key.
        poll: { interval: '200ms', jitter: 0, lookback: `${lookbackMs}ms`, settle: '100ms', start_at: '-2m', max_window: '20s', rate_limit: 'none' },
        models: [{ id: 'm1' }],
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    const daemon = await Daemon.start({ config, logger: pino({ level: 'silent' }), pruneEveryMs: 0 });
    try {
      // Caught up (six windows of 20 s), then a few seconds of fresh windows past the lookback.
      await waitFor(() => (readState(config.state.path)?.watermarks.get('m1') ?? 0) > Date.now() - 1_000, 30_000, 'the catch-up');
      const caughtUpCalls = service.calls.length;
      await sleep(4_000);
      await waitFor(() => {
        const st = readState(config.state.path);
        return !!st && st.cursors.get('files') === st.lastSeq;
      }, 10_000, 'delivery');
      expect(service.calls.length).toBeGreaterThan(caughtUpCalls + 5);
    } finally {
      await daemon.stop();
    }
    const lines = readNdjsonTree(join(dir, 'out'));
    const strays = lines.filter((l) => l.log === stray.log).length;
    const copies = new Map<string, number>();
    for (const l of lines) copies.set(l.log, (copies.get(l.log) ?? 0) + 1);
    const duplicated = [...copies.values()].reduce((n, c) => n + c - 1, 0);
    const st = readState(config.state.path)!;
    const horizon = st.watermarks.get('m1')! - lookbackMs - 1_000;
    const db = new Database(config.state.path, { readonly: true });
    const buckets = db.prepare('SELECT bucket_ms AS b FROM dedupe WHERE model_id = ?').all('m1') as Array<{ b: number }>;
    db.close();
    const strayBucket = Math.floor(Date.parse(stray.time) / 1000) * 1000;
    // Pruned before the last window at the latest: older in-window buckets are gone.
    const stale = buckets.filter((r) => r.b !== strayBucket && r.b < horizon - 5_000).length;
    console.log(`${service.calls.length} windows; lines ${lines.length}, stray delivered ${strays}, duplicated ${duplicated}; dedupe buckets ${buckets.length}, stale ${stale}`);
    expect(strays).toBe(1);
    expect(duplicated).toBe(0);
    expect(buckets.some((r) => r.b === strayBucket)).toBe(true);
    expect(stale).toBe(0);
  });
});
