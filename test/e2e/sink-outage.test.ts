// A webhook receiver that is down for 60 s, then slow (10 s per request), then answering 500
// for a while: nothing is lost, the daemon's memory stays bounded (the backlog waits in the
// journal on disk), and the backlog drains after each recovery. `npm test` runs it with the
// outage and the slow phase shortened (20 s and 12 s); `npm run test:long` at full length.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';
import { compareMultisets, entryKey, readState, sleep, startMls, truthSince, waitFor, writeConfig } from './harness.js';
import { LONG } from '../helpers/long.js';

/** How long the receiver is down, then slow. */
const DOWN_MS = LONG ? 60_000 : 20_000;
const SLOW_MS = LONG ? 22_000 : 12_000;

const TOKEN = 'tok-outage-test-a61c2b';
const MODELS = ['m1', 'm2'];
let dir: string;
let sim: Simulator;
let hook: WebhookReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-outage-'));
  sim = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 100, historyMs: 5_000, multilineRate: 0.05, longRate: 0.01, seed: 61 });
  hook = await startWebhookReceiver();
});
afterAll(async () => {
  await Promise.all([sim?.close(), hook?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describe('webhook receiver outages', () => {
  it(`down ${DOWN_MS / 1000} s, slow 10 s per request, then 500s: no loss, bounded memory, backlog drains`, { timeout: 240_000 }, async () => {
    const statePath = join(dir, 'state.db');
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: statePath },
      poll: { interval: '500ms', lookback: '3s', settle: '200ms', start_at: '-5s', max_window: '1m', rate_limit: 'none', reread: { ages: ['1s'] } },
      models: MODELS.map((id) => ({ id })),
      sinks: [{ name: 'hook', type: 'webhook', url: hook.url, timeout: '30s', batch: { max_entries: 500, max_delay: '200ms' }, retry: { base_delay: '200ms', max_delay: '2s' } }],
      log: { level: 'warn' },
    });
    const p = startMls(['run', '--config', config], { MLS_API_TOKEN: TOKEN });
    const pid = p.child.pid!;
    let peakRss = 0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(pid))), 500);
    const backlog = () => {
      const st = readState(statePath);
      return st ? st.lastSeq - (st.cursors.get('hook') ?? 0) : 0;
    };
    const drained = (what: string) => waitFor(() => backlog() < 600, 60_000, what);
    try {
      await waitFor(() => hook.uniqueEntries().length > 0, 15_000, 'first deliveries');

      await hook.stop();
      const downAt = Date.now();
      await sleep(DOWN_MS);
      const backlogDown = backlog();
      // 200 entries/s are produced: most of what the outage held back waits in the journal.
      expect(backlogDown).toBeGreaterThan(DOWN_MS / 12);
      await hook.restart();
      await drained('the backlog to drain after the outage');
      const drainMs = Date.now() - downAt - DOWN_MS;

      hook.setDelay(10_000);
      await sleep(SLOW_MS);
      hook.setDelay(0);
      await drained('the backlog to drain after the slow phase');

      hook.failNext(500, Number.POSITIVE_INFINITY);
      await sleep(10_000);
      const backlog500 = backlog();
      hook.recover();
      await drained('the backlog to drain after the 500s');

      sim.stopProducing();
      const stoppedAt = Date.now();
      await waitFor(() => {
        const st = readState(statePath);
        return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 3_500) && st.cursors.get('hook') === st.lastSeq;
      }, 60_000, 'the final drain');
      const st = readState(statePath)!;
      const figures = compareMultisets(truthSince(sim.groundTruth(), st.starts).map(entryKey), hook.uniqueEntries().map(entryKey));
      console.log(
        `sink outage test: produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}; ` +
          `backlog after ${DOWN_MS / 1000} s down ${backlogDown} entries, drained in ${(drainMs / 1000).toFixed(1)} s; backlog after 10 s of 500s ${backlog500}; peak RSS ${peakRss.toFixed(0)} MB`,
      );
      expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
      expect(peakRss).toBeLessThan(250);
    } finally {
      clearInterval(sampler);
      p.child.kill('SIGTERM');
      await p.exited;
    }
    expect(p.stderr()).not.toContain(TOKEN);
  });
});
