// An entry that becomes visible at the service after the re-read at a learned (earlier) age,
// but within the configured first re-read age, is delivered by the re-read at the configured
// age, not left for the read at `lookback`.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { entryAt, page, startHostileService, type HostileService, type LogsCall, type WireEntry } from '../helpers/hostile-service.js';
import { readNdjsonTree, waitFor } from './harness.js';

const TOKEN = 'tok-late-entry-test-41aa';
const EVERY_MS = 50;
const LOOKBACK_MS = 90_000;
const VISIBLE_AFTER_MS = 8_000;
let dir: string;
let service: HostileService | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-late-entry-'));
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('an entry visible after the learned first re-read but within the configured one', () => {
  it('is delivered by the re-read at the configured age, not by the read at lookback', { timeout: 120_000 }, async () => {
    const t0 = Date.now() - 1_000;
    let straggler: { atMs: number; entry: WireEntry } | undefined;
    const foundBy: LogsCall[] = [];
    // A steady entry every 50 ms, each visible at its own time; the straggler only 8 s after its time.
    service = await startHostileService((call) => {
      const until = Math.min(call.toMs, call.atMs);
      const entries: WireEntry[] = [];
      for (let k = Math.max(0, Math.ceil((call.fromMs - t0) / EVERY_MS)); t0 + k * EVERY_MS <= until; k++) entries.push(entryAt(t0 + k * EVERY_MS + 7, `steady ${k}`));
      if (straggler && straggler.atMs >= call.fromMs && straggler.atMs <= call.toMs && call.atMs >= straggler.atMs + VISIBLE_AFTER_MS) {
        entries.push(straggler.entry);
        foundBy.push(call);
      }
      return { body: page(entries) };
    });
    const logs: string[] = [];
    const config = parseConfig(
      {
        api: { base_url: service.url, token: TOKEN, retry: { deadline: '2s' } },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '1s', min_interval: '500ms', lookback: `${LOOKBACK_MS / 1000}s`, settle: 'auto', start_at: new Date(t0).toISOString(), rate_limit: 'none', jitter: 0, reread: { ages: ['20s'] } },
        models: [{ id: 'm' }],
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }) });
    try {
      // The first re-read age learned from the steady entries, well below the configured 20 s.
      let learnedS = Number.NaN;
      await waitFor(async () => {
        learnedS = Number(/^mls_poll_first_reread_age_seconds\{model="m"\} (\S+)$/m.exec(await daemon.metrics.text())?.[1]);
        return learnedS < 10;
      }, 40_000, 'a first re-read age learned below 10 s', 200);
      const atMs = Date.now() + 1_000;
      straggler = { atMs, entry: entryAt(atMs, 'the straggler') };
      await waitFor(() => readNdjsonTree(join(dir, 'out')).some((l) => l.log === 'the straggler'), LOOKBACK_MS, 'the straggler', 200, () => logs.slice(-3).join(''));
      const age = foundBy[0]!.atMs - atMs;
      console.log(`late entry: learned first re-read age ${learnedS} s; the straggler, visible 8 s after its time, was first returned by a read at age ${(age / 1000).toFixed(1)} s (configured age 20 s, lookback 90 s)`);
      expect(age).toBeLessThan(LOOKBACK_MS);
      expect(age).toBeGreaterThanOrEqual(20_000);
    } finally {
      await daemon.stop();
    }
    expect(readNdjsonTree(join(dir, 'out')).filter((l) => l.log === 'the straggler')).toHaveLength(1);
  });
});
