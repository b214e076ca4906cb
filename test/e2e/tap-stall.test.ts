// A tap that never reads: it asks for the records and then reads nothing while megabytes go
// to the file sink. Delivery must not wait for it (every entry reaches the file, once), the
// records it could not take are counted and told to it, and it does not hold the stop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, startMls, truthSince, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-tap-stall-7e40b2';
let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-tap-stall-'));
  // about 24,000 entries (several MB of lines), fetched over a few seconds (rate_limit below)
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 100, historyMs: 120_000, pageSize: 250, seed: 5, content: 'python' });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Connects to the control socket, asks for a tap, and reads nothing. */
function stalledTap(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path, () => {
      socket.write('{"v":1,"op":"tap","args":{}}\n');
      resolve(socket);
    });
    socket.pause();
    socket.once('error', reject);
  });
}

describe('a tap that never reads', () => {
  it('neither slows nor stops delivery, loses records counted as dropped, and does not hold the stop', { timeout: 120_000 }, async () => {
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: join(dir, 'state.db') },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-3m', max_window: '1m', rate_limit: '20/s' },
      models: [{ id: 'm1' }, { id: 'm2' }],
      sinks: [{ name: 'files', type: 'file', raw: true, path: join(dir, 'out', '{model_id}.ndjson') }],
      shutdown_timeout: '20s',
    });
    const daemon = startMls(['run', '-c', config], { MLS_API_TOKEN: TOKEN });
    try {
      await waitFor(() => daemon.stderr().includes('control socket listening'), 30_000, 'the control socket', 50, daemon.stderr);
      const late = await stalledTap(join(dir, 'state.db.sock'));
      // one that never reads, not even at the stop
      const never = await stalledTap(join(dir, 'state.db.sock'));
      never.on('error', () => {});
      await new Promise((r) => setTimeout(r, 2_000));
      sim.stopProducing();
      const stoppedAt = Date.now();
      await waitFor(() => {
        const st = readState(join(dir, 'state.db'));
        return !!st && ['m1', 'm2'].every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 1_000) && st.cursors.get('files') === st.lastSeq;
      }, 60_000, 'every entry delivered while the taps read nothing', 200, daemon.stderr);
      const st = readState(join(dir, 'state.db'))!;
      const shipped = readNdjsonTree(join(dir, 'out'));
      expect(compareMultisets(truthSince(sim.groundTruth(), st.starts).map(entryKey), shipped.map(entryKey))).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });

      // The first tap reads at last: what was held for it, then its answer at the stop.
      let text = '';
      late.setEncoding('utf8').on('data', (d: string) => (text += d));
      const lateClosed = new Promise((r) => late.once('close', r));
      late.resume();
      daemon.child.kill('SIGTERM');
      const end = await daemon.exited;
      expect(end.code, daemon.stderr()).toBe(0);
      expect(daemon.stderr()).not.toContain('timed out');
      await lateClosed;
      const answers = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; data: { lines?: string; dropped: number } });
      const result = answers.at(-1)!;
      expect(result.type).toBe('result');
      const received = answers.filter((a) => a.type === 'event').reduce((n, a) => n + a.data.lines!.split('\n').filter(Boolean).length, 0);
      console.log(`stalled tap: ${shipped.length} entries shipped, ${received} shown to the tap, ${result.data.dropped} dropped`);
      expect(received).toBeGreaterThan(0);
      expect(result.data.dropped).toBeGreaterThan(0);
      expect(received + result.data.dropped).toBeLessThanOrEqual(shipped.length);
      never.destroy();
    } finally {
      daemon.child.kill('SIGKILL');
    }
  });
});
