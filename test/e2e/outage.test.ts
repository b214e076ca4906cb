// A long outage of the service: the daemon starts while the service answers only 503, then
// the service becomes unreachable (connection refused), while an hour of entries waits to
// be read (the simulator's history with start_at -1h). When the service returns, the
// daemon walks the hour window after window (max_window 5m: at least 12 windows) without
// waiting for the poll interval (30 s) between them, and delivers every entry once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, sleep, truthSince, waitFor } from './harness.js';

const TOKEN = 'tok-outage-test-6c1e07';
const MODELS = ['o1', 'o2'];
const HOUR = 3_600_000;
let dir: string;
let sim: Simulator;

/** A TCP forwarder to the simulator that can go away (connection refused) and come back on the same port. */
class Outage {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: number) {}
  async up(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }
  async down(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    for (const sock of this.sockets) sock.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
let proxy: Outage;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-outage-'));
  // 65 minutes of history, so the hour before the daemon's start is all there.
  sim = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 2, historyMs: HOUR + 5 * 60_000, pageSize: 200, seed: 31 });
  proxy = new Outage(sim.port);
  await proxy.up();
});
afterAll(async () => {
  await proxy?.down();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

function metric(text: string, name: string, model: string): number {
  const m = new RegExp(`^${name}\\{model="${model}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('a long outage of the service', () => {
  it('after an hour of backlog, catches up window after window without waiting for the interval, losing and duplicating nothing', { timeout: 60_000 }, async () => {
    const logs: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
    const config = parseConfig(
      {
        api: { base_url: `http://127.0.0.1:${proxy.port}`, token: TOKEN, retry: { deadline: '1s', base_delay: '50ms', max_delay: '200ms' }, timeouts: { connect: '500ms', headers: '1s', body: '1s' } },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '30s', jitter: 0, lookback: '10s', settle: '1s', start_at: '-1h', max_window: '5m', rate_limit: 'none', reread: { ages: ['5s'] } },
        models: MODELS.map((id) => ({ id })),
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_entries: 2000, max_delay: '50ms' } }],
      },
      { baseDir: dir, env: {} },
    );

    // 1. the service answers 503 to everything; the hour of backlog is complete (nothing new is produced)
    sim.stopProducing();
    sim.setFaults({ error503: 1, retryAfter: 0 });
    const daemon = await Daemon.start({ config, logger });
    try {
      await sleep(2_500);
      // 2. the service is unreachable
      await proxy.down();
      await sleep(2_500);
      let text = await daemon.metrics.text();
      for (const m of MODELS) expect(metric(text, 'mls_polls_total', m)).toBe(0);
      expect(text).toMatch(/mls_poll_errors_total\{model="o1",code="MLS_ERR_API_UNAVAILABLE"\} [1-9]/);
      expect(readNdjsonTree(join(dir, 'out'))).toHaveLength(0);

      // 3. it comes back
      sim.setFaults({ error503: 0 });
      await proxy.up();
      const backAt = Date.now();
      let firstWindowAt: number | undefined;
      await waitFor(async () => {
        text = await daemon.metrics.text();
        if (firstWindowAt === undefined && MODELS.some((m) => metric(text, 'mls_polls_total', m) > 0)) firstWindowAt = Date.now();
        // the hour from start_at is walked (what is left is shorter than one interval: the next regular poll takes it)
        const st = readState(config.state.path);
        return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) >= st.starts.get(m)! + HOUR);
      }, 45_000, 'the catch-up to walk the hour', 50);
      const caughtUpAt = Date.now();
      text = await daemon.metrics.text();
      const windows = MODELS.map((m) => metric(text, 'mls_polls_total', m));
      await waitFor(() => {
        const st = readState(config.state.path);
        return !!st && st.cursors.get('files') === st.lastSeq;
      }, 15_000, 'the file sink to drain');

      const st = readState(config.state.path)!;
      const truth = truthSince(sim.groundTruth(), st.starts);
      const figures = compareMultisets(truth.map(entryKey), readNdjsonTree(join(dir, 'out')).map(entryKey));
      const walkMs = caughtUpAt - (firstWindowAt ?? backAt);
      console.log(
        `outage test: 5 s outage (503, then connection refused) over a 1 h backlog; first window ${(firstWindowAt ?? backAt) - backAt} ms after the service returned; ` +
          `walked ${windows.join(' + ')} windows in ${walkMs} ms (interval 30 s); produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}`,
      );
      for (const w of windows) expect(w).toBeGreaterThanOrEqual(12);
      expect(walkMs).toBeLessThan(10_000); // twelve windows at one per interval would take six minutes
      expect(figures.expected).toBeGreaterThan(10_000);
      expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
      // the outage was reported without flooding the log
      const failures = logs.filter((l) => l.includes('fetching logs failed'));
      expect(failures.length).toBeGreaterThan(0);
      expect(failures.length).toBeLessThanOrEqual(2 * MODELS.length);
      expect(logs.some((l) => l.includes('model polling recovered'))).toBe(true);
    } finally {
      await daemon.stop();
    }
  });
});
