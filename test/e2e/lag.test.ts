// mls_model_lag_seconds is what the lag alert watches, so it must keep growing exactly when a
// model stops making progress: a window that pages without end, a journal full with
// `when_full: block`. The daemon runs in-process on a clock the test moves; the gauge is read
// through the Prometheus text, as a scrape would.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { page, startHostileService, type HostileService, type WireEntry } from '../helpers/hostile-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';
import { waitFor } from './harness.js';

const TOKEN = 'tok-lag-test-51d0';
let dir: string;
let service: HostileService | undefined;
let hook: WebhookReceiver | undefined;
let daemon: Daemon | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-lag-'));
});
afterEach(async () => {
  await daemon?.stop({ drainMs: 0 });
  await Promise.all([service?.close(), hook?.close()]);
  daemon = service = hook = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A clock that moves only when the test says so. */
function manualClock(startMs: number) {
  let now = startMs;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

async function lagOf(d: Daemon, model: string): Promise<number | undefined> {
  const m = new RegExp(`^mls_model_lag_seconds\\{model="${model}"\\} (\\S+)$`, 'm').exec(await d.metrics.text());
  return m ? Number(m[1]) : undefined;
}

function entriesAt(fromMs: number, n: number, tag: string): WireEntry[] {
  return Array.from({ length: n }, (_, i) => ({ time: new Date(fromMs + i).toISOString(), stream: 'stdout', log: `${tag} ${i}` }));
}

function config(extra: Record<string, unknown>, models = [{ id: 'm1' }]) {
  return parseConfig(
    {
      api: { base_url: service!.url, token: TOKEN, retry: { deadline: '2s', base_delay: '20ms', max_delay: '100ms' } },
      state: { path: join(dir, 'state.db') },
      poll: { interval: '200ms', jitter: 0, lookback: '5s', settle: '1s', start_at: '-1m', max_window: '10m', rate_limit: 'none' },
      models,
      sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
      ...extra,
    },
    { baseDir: dir, env: {} },
  );
}

describe('mls_model_lag_seconds', () => {
  it('grows with the clock while a model pages without end (a new next_token with every page)', { timeout: 60_000 }, async () => {
    service = await startHostileService((call) => ({ body: page(entriesAt(call.fromMs, 2, `page ${call.index}`), `tok-${call.index}`), delayMs: 20 }));
    const clock = manualClock(Date.now());
    daemon = await Daemon.start({ config: config({}), logger: pino({ level: 'silent' }), clock });
    await waitFor(() => service!.calls.length >= 5, 20_000, 'the model paging');
    const before = await lagOf(daemon, 'm1');
    expect(before).toBeGreaterThanOrEqual(60); // start_at -1m, and no window has completed
    clock.advance(120_000);
    await waitFor(() => service!.calls.length >= 10, 20_000, 'more pages');
    const after = await lagOf(daemon, 'm1');
    console.log(`endless paging: ${service.calls.length} pages, lag ${before} s -> ${after} s after the clock moved 120 s`);
    expect(after! - before!).toBeCloseTo(120, 3);
  });

  it('grows with the clock while polling is paused by a full journal (when_full: block)', { timeout: 60_000 }, async () => {
    // Every window returns 40 entries; the sink refuses everything, so the journal (max 100) fills.
    service = await startHostileService((call) => ({ body: page(entriesAt(call.fromMs, 40, `window ${call.index}`)) }));
    hook = await startWebhookReceiver();
    hook.failNext(503, Infinity);
    const logs: string[] = [];
    const clock = manualClock(Date.now());
    const cfg = config({
      poll: { interval: '200ms', jitter: 0, lookback: '5s', settle: '1s', start_at: '-10m', max_window: '1m', rate_limit: 'none' },
      sinks: [{ name: 'hook', type: 'webhook', url: hook.url, batch: { max_entries: 50, max_delay: '20ms' }, retry: { base_delay: '50ms', max_delay: '200ms' } }],
      buffer: { max_entries: 100, when_full: 'block' },
    });
    daemon = await Daemon.start({ config: cfg, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }), clock });
    await waitFor(() => logs.some((l) => l.includes('journal full: polling paused')), 20_000, 'the pause');
    const calls = service.calls.length;
    const before = await lagOf(daemon, 'm1');
    clock.advance(45_000);
    await new Promise((r) => setTimeout(r, 1_500)); // the paused poller wakes once a second to look for room
    const after = await lagOf(daemon, 'm1');
    console.log(`journal full: paused after ${calls} windows, lag ${before} s -> ${after} s after the clock moved 45 s`);
    expect(service.calls.length).toBe(calls); // still paused
    expect(after! - before!).toBeCloseTo(45, 3);
  });

  it('has a series for each configured model only: a model removed by a reload loses its series', { timeout: 60_000 }, async () => {
    service = await startHostileService(() => ({ body: page([]) }));
    daemon = await Daemon.start({ config: config({}, [{ id: 'm1' }, { id: 'm2' }]), logger: pino({ level: 'silent' }) });
    await waitFor(async () => (await lagOf(daemon!, 'm2')) !== undefined && service!.calls.some((c) => c.modelId === 'm2'), 20_000, 'both models polled');
    await daemon.reload(config({}, [{ id: 'm1' }]));
    expect(await lagOf(daemon, 'm1')).toBeGreaterThanOrEqual(0);
    expect(await lagOf(daemon, 'm2')).toBeUndefined();
  });
});
