// A failed sync of the state file (an I/O error from fdatasync): the daemon reports it as
// fatal and commits nothing more; no sink receives an entry that was not on disk. The next
// start recovers from the file and delivers every entry exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fdatasync, fdatasyncSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import type { WalSync } from '../../src/journal/store.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, sleep, truthSince, waitFor } from './harness.js';

const TOKEN = 'tok-sync-failure-test-2f90c4';
const MODELS = ['s1', 's2'];
let dir: string;
let sim: Simulator;
let stoppedAt = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-sync-failure-'));
  sim = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 50, historyMs: 120_000, pageSize: 100, seed: 17 });
  sim.stopProducing();
  stoppedAt = Date.now();
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a failed sync of the state file', () => {
  it('is fatal: nothing more is committed, no sink gets an unsynced entry, and the next start delivers everything once', { timeout: 60_000 }, async () => {
    const config = parseConfig(
      {
        api: { base_url: sim.url, token: TOKEN },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '1s', settle: '100ms', start_at: '-2m', max_window: '1h', rate_limit: 'none' },
        models: MODELS.map((id) => ({ id })),
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    // The third background sync fails, as fdatasync does after a write-back error.
    let syncs = 0;
    let syncing = 0;
    let durableBeforeFailure = 0;
    const committed = () => readState(config.state.path)?.lastSeq ?? 0;
    const failing: WalSync = {
      now: fdatasyncSync,
      background: (fd, done) => {
        if (++syncs < 3) {
          // what this sync makes durable: every commit so far
          syncing = committed();
          return fdatasync(fd, (err) => {
            if (!err) durableBeforeFailure = syncing;
            done(err);
          });
        }
        setImmediate(() => done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', errno: -5, syscall: 'fdatasync' })));
      },
    };
    const logs: string[] = [];
    const fatal: unknown[] = [];
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }), walSync: failing, onFatal: (err) => fatal.push(err) });
    try {
      await waitFor(() => fatal.length > 0, 20_000, 'the failed sync');
      expect((fatal[0] as { code?: string }).code).toBe('MLS_ERR_STATE_SYNC');
      const line = logs.find((l) => l.includes('could not sync the state file to disk'));
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ level: 60, err: expect.stringMatching(/EIO/) });
      const lastSeq = committed();
      expect(lastSeq).toBeGreaterThan(durableBeforeFailure); // the failed sync had entries to make durable
      await sleep(500);
      // nothing more was committed, and the sink holds only what was synced before
      expect(committed()).toBe(lastSeq);
      expect(readNdjsonTree(join(dir, 'out')).length).toBeLessThanOrEqual(durableBeforeFailure);
      expect(logs.join('')).not.toContain(TOKEN);
    } finally {
      await daemon.stop({ drainMs: 0 });
    }

    // The next start recovers from the file.
    const again = await Daemon.start({ config, logger: pino({ level: 'warn' }) });
    try {
      await waitFor(() => {
        const st = readState(config.state.path);
        // every model's watermark past the last entry, and the sink at the journal's end
        return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt) && st.cursors.get('files') === st.lastSeq;
      }, 20_000, 'the restarted daemon to deliver everything');
    } finally {
      await again.stop();
    }
    const st = readState(config.state.path)!;
    const figures = compareMultisets(truthSince(sim.groundTruth(), st.starts).map(entryKey), readNdjsonTree(join(dir, 'out')).map(entryKey));
    console.log(`sync failure test: failed sync after seq ${durableBeforeFailure} was durable; produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}`);
    expect(figures.expected).toBeGreaterThan(5_000);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});
