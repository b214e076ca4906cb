// The journal is bounded. With `when_full: block` polling pauses while a sink is down and
// resumes, losing nothing, when it returns; with `drop_oldest` the oldest undelivered entries
// are dropped, counted per sink and logged at error level.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { StateReader } from '../../src/journal/reader.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';
import { compareMultisets, entryKey, readState, sleep, truthSince, waitFor } from './harness.js';

const TOKEN = 'tok-backpressure-2f61';
let dir: string;
let sim: Simulator;
let hook: WebhookReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-bp-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 200, historyMs: 2_000, pageSize: 100, seed: 12 });
  hook = await startWebhookReceiver();
});
afterAll(async () => {
  await Promise.all([sim?.close(), hook?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function journalEntries(path: string): number {
  const s = StateReader.open(path);
  try {
    return s.journalSize().entries;
  } finally {
    s.close();
  }
}

function configFor(name: string, whenFull: 'block' | 'drop_oldest', baseUrl = sim.url) {
  return parseConfig(
    {
      api: { base_url: baseUrl, token: TOKEN },
      state: { path: join(dir, name, 'state.db') },
      poll: { interval: '200ms', lookback: '1s', settle: '100ms', start_at: '-2s', max_window: '1m', rate_limit: 'none', reread: { ages: ['500ms'] } },
      models: [{ id: 'm1' }],
      sinks: [{ name: 'hook', type: 'webhook', url: hook.url, batch: { max_entries: 100, max_delay: '50ms' }, retry: { base_delay: '50ms', max_delay: '200ms' } }],
      buffer: { max_entries: 500, when_full: whenFull },
    },
    { baseDir: dir, env: {} },
  );
}

describe('journal bounds', () => {
  it('block: polling pauses at the bound while the sink is down, and nothing is lost', { timeout: 60_000 }, async () => {
    const logs: string[] = [];
    const config = configFor('block', 'block');
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }) });
    try {
      await waitFor(() => hook.requests.length > 0, 10_000, 'first delivery');
      await hook.stop();
      await waitFor(() => logs.some((l) => l.includes('journal full: polling paused')), 15_000, 'the pause');
      let peak = 0;
      for (let i = 0; i < 10; i++) {
        peak = Math.max(peak, journalEntries(config.state.path));
        await sleep(200);
      }
      // at most one page (100 entries) beyond the bound: the page in flight still commits
      expect(peak).toBeLessThanOrEqual(500 + 100);
      expect(await daemon.metrics.text()).toContain('mls_journal_full 1');
      await hook.restart();
      await waitFor(() => logs.some((l) => l.includes('polling resumes')), 15_000, 'the resumption');
      sim.stopProducing();
      const stoppedAt = Date.now();
      await waitFor(() => {
        const st = readState(config.state.path);
        return !!st && (st.watermarks.get('m1') ?? 0) > stoppedAt + 1_500 && st.cursors.get('hook') === st.lastSeq;
      }, 30_000, 'catch-up');
    } finally {
      await daemon.stop();
    }
    const st = readState(config.state.path)!;
    const figures = compareMultisets(truthSince(sim.groundTruth('m1'), st.starts).map(entryKey), hook.uniqueEntries().map(entryKey));
    console.log(`backpressure (block): produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}`);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0 });
  });

  it('drop_oldest: drops and counts the oldest undelivered entries, logging at error level', { timeout: 60_000 }, async () => {
    const sim2 = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 300, historyMs: 5_000, pageSize: 100, seed: 13 });
    const logs: string[] = [];
    const config = configFor('drop', 'drop_oldest', sim2.url);
    await hook.stop();
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }) });
    try {
      await waitFor(() => logs.some((l) => l.includes('"level":50') && l.includes('dropped the oldest entries')), 20_000, 'a drop');
      const text = await daemon.metrics.text();
      const dropped = Number(/mls_sink_dropped_total\{sink="hook"\} (\d+)/.exec(text)?.[1] ?? 0);
      expect(dropped).toBeGreaterThan(0);
      expect(journalEntries(config.state.path)).toBeLessThanOrEqual(600);
      expect(daemon.status().sinks[0]!.droppedEntries).toBeGreaterThan(0);
    } finally {
      await hook.restart();
      await daemon.stop();
      await sim2.close();
    }
  });
});
