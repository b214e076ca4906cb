// The daemon behind a proxy: `api.proxy` (with credentials) carries every request to the
// service, and a webhook sink with `proxy: none` beside it posts directly although
// HTTP_PROXY names another proxy. Every entry arrives once; no log line shows the password.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { startProxy, type TestProxy } from '../helpers/proxy.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.js';
import { waitFor } from './harness.js';

const TOKEN = 'tok-proxy-e2e-61c0';
const PASSWORD = 'daemon-proxy-pw-2a9';
let dir: string;
let sim: Simulator;
let proxy: TestProxy;
let envProxy: TestProxy;
let receiver: WebhookReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-proxy-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 20, historyMs: 5_000, seed: 5 });
  sim.stopProducing();
  proxy = await startProxy({ user: 'mls', password: PASSWORD });
  envProxy = await startProxy();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await Promise.all([sim?.close(), proxy?.close(), envProxy?.close(), receiver?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('the daemon behind a proxy', () => {
  it('polls through api.proxy and posts to a sink with proxy none directly', { timeout: 60_000 }, async () => {
    for (const name of ['http_proxy', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']) vi.stubEnv(name, undefined);
    vi.stubEnv('HTTP_PROXY', envProxy.url);
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    const config = parseConfig(
      {
        api: { base_url: sim.url, token: TOKEN, proxy: proxy.urlWith('mls', PASSWORD) },
        state: { path: join(dir, 'state.db') },
        poll: { interval: '200ms', settle: '0s', lookback: '1s', start_at: '-1m', max_window: '1h', rate_limit: 'none', reread: { ages: [] } },
        models: [{ id: 'm1' }],
        sinks: [{ name: 'hook', type: 'webhook', url: receiver.url, proxy: 'none', batch: { max_delay: '20ms' } }],
      },
      { baseDir: dir, env: {} },
    );
    const expected = sim.groundTruth().length;
    expect(expected).toBeGreaterThan(0);
    const daemon = await Daemon.start({ config, logger });
    try {
      await waitFor(() => receiver.requests.reduce((n, r) => n + r.entries.length, 0) >= expected, 30_000, 'every entry at the webhook');
    } finally {
      await daemon.stop();
    }
    expect(receiver.requests.reduce((n, r) => n + r.entries.length, 0)).toBe(expected);
    expect(proxy.uses.length).toBeGreaterThan(0);
    expect(proxy.uses.every((u) => u.what.startsWith(`FORWARD ${sim.url}/rest/model/logs/get/`) && u.authorization === `Basic ${Buffer.from(`mls:${PASSWORD}`).toString('base64')}`)).toBe(true);
    expect(envProxy.uses).toEqual([]);
    expect(lines.join('\n')).not.toContain(PASSWORD);
  });
});
