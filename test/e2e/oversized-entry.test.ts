// One entry larger than api.max_response_bytes among small ones: the daemon cuts the window
// down until the entry is alone in a 1 ms window, delivering everything before it; then the
// model pauses with one error line naming the limit and the bytes seen (in /status and the
// metrics too) while the other models go on, and a reload with a larger limit delivers the
// large entry and the rest, each once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { entriesIn, entryAt, page, startHostileService, type HostileService, type WireEntry } from '../helpers/hostile-service.js';
import { entryKey, readNdjsonTree, readState, sleep, waitFor } from './harness.js';

const TOKEN = 'tok-oversized-test-0b5e';
let dir: string;
let service: HostileService | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-oversized-'));
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const keys = (model: string, entries: readonly WireEntry[]) => entries.map((e) => entryKey({ model_id: model, ...e })).sort();

describe('an entry larger than api.max_response_bytes', () => {
  it('delivers what comes before it, pauses the model with one clear error, and delivers it after a reload with a larger limit', { timeout: 40_000 }, async () => {
    const t0 = Date.now() - 3_000;
    const before = [100, 300, 700, 900].map((d) => entryAt(t0 + d, `small before ${d}`));
    const big = entryAt(t0 + 1_000, 'x'.repeat(200 * 1024));
    const after = [1_200, 1_800, 2_500].map((d) => entryAt(t0 + d, `small after ${d}`));
    const mine = [...before, big, ...after];
    const others = [500, 1_000, 1_500, 2_500].map((d) => entryAt(t0 + d, `other ${d}`));
    // A faithful service: each window's entries in one page.
    service = await startHostileService((call) => ({ body: page(entriesIn(call.modelId === 'big' ? mine : others, call)) }));
    const logs: string[] = [];
    const raw = (maxResponseBytes: string) => ({
      api: { base_url: service!.url, token: TOKEN, max_response_bytes: maxResponseBytes, retry: { deadline: '2s' } },
      state: { path: join(dir, 'state.db') },
      poll: { interval: '300ms', lookback: '30s', settle: '100ms', start_at: new Date(t0).toISOString(), max_window: '1m', rate_limit: 'none', jitter: 0, reread: { ages: ['20s'] } },
      models: [{ id: 'big' }, { id: 'other' }],
      sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
    });
    const config = parseConfig(raw('64KiB'), { baseDir: dir, env: {} });
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }) });
    const lines = (model: string) => readNdjsonTree(join(dir, 'out')).filter((l) => l.model_id === model).map(entryKey).sort();
    try {
      const paused = () => logs.filter((l) => l.includes('"level":50') && l.includes('paused until api.max_response_bytes is raised'));
      await waitFor(() => paused().length > 0, 20_000, 'the model to pause', 100, () => logs.slice(-3).join(''));
      await waitFor(() => lines('big').length >= before.length, 5_000, 'the entries before the large one', 100);
      const otherStart = readState(config.state.path)!.watermarks.get('other') ?? 0;
      await sleep(1_000);
      // One error line, naming the setting and the size; nothing after the large entry yet, nothing twice.
      expect(paused()).toHaveLength(1);
      expect(paused()[0]).toMatch(/api\.max_response_bytes \(65536 bytes\)[^"]*was 20\d{4} bytes/);
      expect(lines('big')).toEqual(keys('big', before));
      const metrics = await daemon.metrics.text();
      expect(metrics).toContain('mls_model_up{model="big"} 0');
      expect(metrics).toMatch(/mls_poll_errors_total\{model="big",code="MLS_ERR_API_TOO_LARGE"\} 1$/m);
      expect(metrics).toMatch(/mls_window_splits_total\{model="big",reason="too_large"\} [1-9]\d*$/m);
      const status = daemon.status().models.find((m) => m.id === 'big')!;
      expect(status.lastError).toMatch(/api\.max_response_bytes \(65536 bytes\)/);
      expect(status.window!.toMs - status.window!.fromMs).toBe(1);
      expect(status.window!.fromMs).toBeLessThanOrEqual(t0 + 1_000);
      expect(status.window!.toMs).toBeGreaterThanOrEqual(t0 + 1_000);
      // The other model goes on.
      expect(lines('other')).toEqual(keys('other', others));
      expect(readState(config.state.path)!.watermarks.get('other')!).toBeGreaterThan(otherStart);

      await daemon.reload(parseConfig(raw('1MiB'), { baseDir: dir, env: {} }));
      await waitFor(() => lines('big').length >= mine.length, 10_000, 'the rest after the reload', 100, () => logs.slice(-3).join(''));
      await sleep(500);
      expect(await daemon.metrics.text()).toContain('mls_model_up{model="big"} 1');
      expect(daemon.status().models.find((m) => m.id === 'big')!.lastError).toBeUndefined();
    } finally {
      await daemon.stop();
    }
    expect(lines('big')).toEqual(keys('big', mine));
    expect(lines('other')).toEqual(keys('other', others));
    expect(logs.filter((l) => l.includes('paused until api.max_response_bytes is raised'))).toHaveLength(1);
    const splits = logs.filter((l) => l.includes('a page was larger than api.max_response_bytes')).length;
    const seen = /was (\d+) bytes/.exec(logs.find((l) => l.includes('paused until api.max_response_bytes')) ?? '')?.[1];
    console.log(`oversized entry: ${splits} window splits to isolate it, ${service.calls.filter((c) => c.modelId === 'big').length} requests, paused at a response of ${seen} bytes; ${mine.length} entries delivered once each`);
  });
});
