// The daemon's pollers on virtual time against the simulator on the same clock: how often
// each model is polled (an active model at min_interval, a quiet one every interval, a
// hurried one at min_interval until its time), and the warning and gauge when the request
// budget cannot poll every model once per interval. Counts, not timings: the clock moves
// only when the scheduler sleeps and no poll cycle runs.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClient } from '../../src/api/types.js';
import { StateStore } from '../../src/journal/store.js';
import { RunningPollers } from '../../src/daemon/pollers.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { VirtualTime } from '../helpers/virtual-time.js';

const TOKEN = 'tok-pollers-7c1e';
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

let dir: string | undefined;
let sim: Simulator | undefined;
let client: ApiClient | undefined;
let store: StateStore | undefined;
let pollers: RunningPollers | undefined;

afterEach(async () => {
  await pollers?.stopAll();
  store?.close();
  await client?.close();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = sim = client = store = pollers = undefined;
});

async function setUp(models: string[], rates: Record<string, number>, poll: Record<string, unknown> = {}) {
  const vt = new VirtualTime(T0);
  dir = mkdtempSync(join(tmpdir(), 'mls-pollers-'));
  sim = await startSimulator({ token: TOKEN, models, ratePerSec: 0, ratePerModel: rates, clock: vt.now, seed: 3 });
  const config = (ids: string[]) =>
    parseConfig(
      {
        api: { base_url: sim!.url, token: TOKEN },
        state: { path: join(dir!, 'state.db') },
        poll: { interval: '10s', min_interval: '1s', jitter: 0, settle: '1s', start_at: 'now', ...poll },
        models: ids.map((id) => ({ id })),
        sinks: [{ name: 'out', type: 'stdout' }],
      },
      { baseDir: dir!, env: {} },
    );
  const cfg = config(models);
  store = StateStore.open(cfg.state.path, { now: vt.now });
  client = createApiClient({ baseUrl: sim.url, token: TOKEN });
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const metrics = new Metrics({ processMetrics: false });
  const s = store;
  pollers = new RunningPollers({
    poll: cfg.poll,
    store: s,
    client,
    metrics,
    logger,
    clock: { now: vt.now },
    pruneEveryMs: undefined,
    waitForRoom: async () => {},
    commit: async (page) => s.commitPages([page])[0]!,
    onAppend: () => {},
    onWindowDone: () => {},
    timer: vt,
    monotonicNow: vt.now,
  });
  // The clock moves only between poll cycles.
  const idle = () => pollers!.cyclesRunning === 0;
  return { vt, cfg, config, lines, metrics, idle, requests: (id: string) => sim!.stats().logsAnswersByModel[id] ?? 0 };
}

describe('adaptive polling', () => {
  it('polls an active model at min_interval and a quiet one every interval', { timeout: 60_000 }, async () => {
    const { vt, cfg, idle, requests } = await setUp(['busy', 'quiet'], { busy: 10, quiet: 0 });
    pollers!.start(cfg);
    await vt.runUntil(T0 + 120_000, 1, [], idle);
    const busy = requests('busy');
    const quiet = requests('quiet');
    console.log(`120 s of virtual time: busy model ${busy} requests, quiet model ${quiet}`);
    // 120 s: the quiet model once at the start and every 10 s; the busy one about every second (and its first re-reads).
    expect(quiet).toBeGreaterThanOrEqual(11);
    expect(quiet).toBeLessThanOrEqual(13);
    expect(busy).toBeGreaterThanOrEqual(100);
    expect(busy).toBeGreaterThan(8 * quiet);
  });

  it('polls a model asked to hurry at min_interval until the time it was given, then every interval again', { timeout: 60_000 }, async () => {
    const { vt, cfg, idle, requests } = await setUp(['quiet'], { quiet: 0 });
    pollers!.start(cfg);
    const counts: number[] = [];
    await vt.runUntil(T0 + 95_000, 1, [
      { ms: T0 + 30_000, run: () => void counts.push(requests('quiet')) },
      { ms: T0 + 30_500, run: () => void expect(pollers!.hurry('quiet', T0 + 50_000)).toBe(true) },
      { ms: T0 + 50_500, run: () => void counts.push(requests('quiet')) },
    ], idle);
    counts.push(requests('quiet'));
    const [before, during, after] = [counts[0]!, counts[1]! - counts[0]!, counts[2]! - counts[1]!];
    console.log(`requests: ${before} in the first 30 s, ${during} in the 20 s hurried, ${after} in the 45 s after`);
    expect(before).toBeLessThanOrEqual(4); // at 0, 10, 20, 30 s
    expect(during).toBeGreaterThanOrEqual(17); // every second for 20 s
    expect(after).toBeLessThanOrEqual(6); // backing off again: 2, 4, 8, 10, 10 … s apart
    expect(pollers!.hurry('unknown', T0 + 200_000)).toBe(false);
  });

  it('warns at start and at reload, with the numbers, when the budget cannot poll every model once per interval', { timeout: 60_000 }, async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `m${i}`);
    const { cfg, config, lines, metrics } = await setUp(ids, {}, { rate_limit: '2/s' });
    pollers!.start(config(ids.slice(0, 10)));
    // 10 models every 10 s take 1 request/s of 2/s: no warning.
    expect(lines.filter((l) => l.level === 40)).toEqual([]);
    expect(await metrics.text()).toMatch(/^mls_poll_budget_utilization\{kind="required"\} 0\.5$/m);
    await pollers!.removeExcept(new Set(ids));
    pollers!.start(cfg);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      msg: expect.stringMatching(/cannot poll every model once per poll\.interval/),
      models: 30,
      intervalSeconds: 10,
      requiredPerSecond: 3,
      budgetPerSecond: 2,
      utilization: 1.5,
      eachModelEverySeconds: 15,
    });
    expect(await metrics.text()).toMatch(/^mls_poll_budget_utilization\{kind="required"\} 1\.5$/m);
    // A reload that keeps too many models says it again.
    await pollers!.removeExcept(new Set(ids));
    pollers!.start(cfg);
    expect(lines.filter((l) => l.level === 40)).toHaveLength(2);
  });
});
