// A service that never stops paging (a new next_token on every page) can hold neither its
// model nor the others: the window fetch reaches poll.window_limits.max_pages, is cut to
// half its span and fetched again, and a 1 s window that still reaches the cap is completed
// as read, with an error line, a metric and an entry in /status; polling moves on. Requests
// are shared fairly: a healthy model next to five endlessly paging ones under a rate limit
// still gets its request every interval.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { renderStatus } from '../../src/cli/status.js';
import { entriesIn, entryAt, page, startHostileService, type HostileService, type LogsCall } from '../helpers/hostile-service.js';
import { entryKey, readNdjsonTree, readState, sleep, waitFor } from './harness.js';

const TOKEN = 'tok-endless-test-77d0';
let dir: string;
let service: HostileService | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-endless-'));
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The first page of a window carries its entries; every page carries a token never seen before. */
function endless(entries: ReturnType<typeof entryAt>[] = []) {
  let n = 0;
  return (call: LogsCall) => ({ body: page(call.nextToken === undefined ? entriesIn(entries, call) : [], `${call.modelId}-${++n}`) });
}

describe('paging that never ends', () => {
  it('shortens the window, abandons it at 1 s with an error, a metric and a status entry, and moves on; each entry once', { timeout: 40_000 }, async () => {
    const t0 = Date.now() - 4_000;
    const entries = [entryAt(t0 + 200, 'early'), entryAt(t0 + 1_500, 'middle'), entryAt(t0 + 2_500, 'late'), entryAt(t0 + 3_500, 'latest')];
    service = await startHostileService(endless(entries));
    const logs: string[] = [];
    const config = parseConfig(
      {
        api: { base_url: service.url, token: TOKEN },
        state: { path: join(dir, 'state.db') },
        poll: {
          interval: '300ms',
          lookback: '2s',
          settle: '100ms',
          start_at: new Date(t0).toISOString(),
          max_window: '1m',
          rate_limit: 'none',
          jitter: 0,
          reread: { ages: ['1s'] },
          window_limits: { max_pages: 5, max_duration: '1m' },
        },
        models: [{ id: 'endless' }],
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    const daemon = await Daemon.start({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }) });
    let status: ReturnType<Daemon['status']>;
    try {
      await waitFor(() => (readState(config.state.path)?.watermarks.get('endless') ?? 0) >= t0 + 4_000, 20_000, 'the watermark to pass the entries', 100, () => logs.slice(-5).join(''));
      await sleep(300);
      status = daemon.status();
    } finally {
      await daemon.stop();
    }
    const metrics = await daemon.metrics.text();
    const metric = (name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
    const splits = metric('mls_window_splits_total', 'model="endless",reason="max_pages"');
    // Not per model: the error line and the status name the model.
    const abandoned = metric('mls_windows_abandoned_total', 'reason="max_pages"');
    expect(splits).toBeGreaterThanOrEqual(2);
    expect(abandoned).toBeGreaterThanOrEqual(2);
    expect(logs.filter((l) => l.includes('"level":40') && l.includes('reached poll.window_limits.max_pages')).length).toBe(splits);
    const errors = logs.filter((l) => l.includes('"level":50') && l.includes('shortest span (1s) still reached poll.window_limits.max_pages'));
    expect(errors.length).toBe(abandoned);

    // No fetch read more than 5 pages: between two first pages, at most 4 token requests.
    const calls = service.calls;
    let run = 0;
    for (const c of calls) {
      run = c.nextToken === undefined ? 1 : run + 1;
      expect(run).toBeLessThanOrEqual(5);
    }

    const st = status!.models.find((m) => m.id === 'endless')!;
    expect(st.windowSplits).toBe(splits);
    expect(st.abandonedWindows!.length).toBe(Math.min(abandoned, 5));
    for (const w of st.abandonedWindows!) {
      expect(w.reason).toBe('max_pages');
      expect(w.pages).toBe(5);
      expect(w.toMs - w.fromMs).toBeLessThanOrEqual(1_000);
    }
    expect(renderStatus(status!, 'test')).toMatch(/windows abandoned at a window limit[\s\S]*endless .* max_pages +5/);

    const lines = readNdjsonTree(join(dir, 'out'));
    expect(lines.map(entryKey).sort()).toEqual(entries.map((e) => entryKey({ model_id: 'endless', ...e })).sort());
    console.log(`endless paging: ${calls.length} requests, ${splits} splits, ${abandoned} windows abandoned at 1 s, ${lines.length} lines for ${entries.length} entries`);
  });
});

describe('fair share of the request budget', () => {
  it('gives a healthy model its request every interval next to five endlessly paging models', { timeout: 40_000 }, async () => {
    const paging = endless();
    service = await startHostileService((call) => (call.modelId === 'healthy' ? { body: page([]) } : paging(call)));
    const config = parseConfig(
      {
        api: { base_url: service.url, token: TOKEN },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '1s', settle: '100ms', lookback: '2s', start_at: 'now', rate_limit: '1/125ms', jitter: 0, reread: { ages: ['1s'] } },
        models: [{ id: 'healthy' }, ...[1, 2, 3, 4, 5].map((i) => ({ id: `endless-${i}` }))],
        sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson') }],
      },
      { baseDir: dir, env: {} },
    );
    const daemon = await Daemon.start({ config, logger: pino({ level: 'warn' }) });
    const observeMs = 8_000;
    try {
      await sleep(1_500 + observeMs);
    } finally {
      await daemon.stop();
    }
    const healthy = service.calls.filter((c) => c.modelId === 'healthy').map((c) => c.atMs);
    const since = healthy[0]! + 1_500;
    const gaps = healthy.slice(1).map((t, i) => t - healthy[i]!).filter((_, i) => healthy[i + 1]! >= since);
    const others = service.calls.filter((c) => c.modelId !== 'healthy').length;
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    console.log(`fairness: healthy model ${gaps.length} requests in ${observeMs} ms (interval 1 s), gaps mean ${Math.round(mean)} ms, longest ${Math.max(...gaps)} ms; endless models ${others} requests`);
    // One request per interval, plus the time to answer and commit it, the poll grid's step
    // (100 ms) and the wait for the next slot of the rate limit (125 ms). Queued behind the
    // endless models' requests (one each), it waited about 5 slots more: gaps of ~1.75 s.
    expect(mean).toBeLessThan(1_500);
    expect(Math.max(...gaps)).toBeLessThan(1_700);
    // The endless models used the rest of the budget.
    expect(others).toBeGreaterThan(40);
  });
});
