// A model whose first window holds an entry over api.max_response_bytes, and nothing before
// it: the model looks quiet (no entry seen yet), and a quiet model's fresh read starts back
// at its oldest re-read frontier. Each piece read before the large entry must move the next
// window on from where the cut left the model, not back to the model's start, or the
// oversized page is asked for again after every piece, without end.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { entriesIn, entryAt, page, startHostileService, type HostileService, type LogsCall } from '../helpers/hostile-service.js';
import { entryKey, readNdjsonTree, sleep, waitFor } from './harness.js';

const TOKEN = 'tok-oversized-first-window-7c1d';
let dir: string;
let service: HostileService | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-oversized-first-'));
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('a first window over api.max_response_bytes', () => {
  it('is cut down to its large entry and the model pauses, without asking for the large page again after each piece read', { timeout: 60_000 }, async () => {
    const now = Date.now();
    const big = entryAt(now - 10_000, 'x'.repeat(200 * 1024));
    const mine = [big, entryAt(now - 9_000, 'small after 1'), entryAt(now - 5_000, 'small after 2')];
    service = await startHostileService((call) => ({ body: page(entriesIn(mine, call)) }));
    const holdsBig = (c: LogsCall) => entriesIn([big], c).length > 0;
    const logs: string[] = [];
    const raw = (maxResponseBytes: string) => ({
      api: { base_url: service!.url, token: TOKEN, max_response_bytes: maxResponseBytes, retry: { deadline: '2s' } },
      state: { path: join(dir, 'state.db') },
      poll: { interval: '300ms', lookback: '30s', settle: '100ms', start_at: '-20s', rate_limit: 'none', jitter: 0 },
      models: [{ id: 'big' }],
      sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
    });
    const config = parseConfig(raw('64KiB'), { baseDir: dir, env: {} });
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }) });
    const lines = () => readNdjsonTree(join(dir, 'out')).map(entryKey).sort();
    try {
      const paused = () => logs.some((l) => l.includes('paused until api.max_response_bytes is raised'));
      await waitFor(paused, 20_000, 'the model to pause', 100, () => `${service!.calls.length} requests, ${service!.calls.filter(holdsBig).length} of them for the large entry`);
      const atPause = service.calls.length;
      await sleep(2_000);
      // Halving a 20 s window down to 1 ms takes about 15 cuts, each asking once for the large
      // page, and each piece read before the entry may cost one more: a few dozen in all.
      const oversized = service.calls.filter(holdsBig).length;
      console.log(`oversized first window: ${service.calls.length} requests, ${oversized} of them for the large entry, then the pause`);
      expect(oversized).toBeLessThanOrEqual(60);
      expect(service.calls.length).toBeLessThanOrEqual(120);
      // Paused: nothing more is asked for.
      expect(service.calls.length).toBe(atPause);
      const status = daemon.status().models.find((m) => m.id === 'big')!;
      expect(status.window!.toMs - status.window!.fromMs).toBe(1);

      await daemon.reload(parseConfig(raw('1MiB'), { baseDir: dir, env: {} }));
      await waitFor(() => lines().length >= mine.length, 10_000, 'every entry after the reload', 100);
      await sleep(500);
    } finally {
      await daemon.stop();
    }
    expect(lines()).toEqual(mine.map((e) => entryKey({ model_id: 'big', ...e })).sort());
  });
});
