// What the daemon's network code loads at start. Importing `node:http` as a module loads
// Node's bundled undici for the module's lazy exports (≈ 45 ms), and `node:tls` costs
// ≈ 20 ms: the API client, the admin server and `mls status` must load neither for an
// http origin. Checked in a fresh process on the built code, after a real request.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../src/simulator/index.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ token: 'tok-modules', models: ['m1'], ratePerSec: 50, historyMs: 10_000 });
});
afterAll(() => sim.close());

describe('modules loaded by the network code', () => {
  it('a logs request, the admin server and the status command load neither undici, nor Node’s bundled undici, nor node:tls', async () => {
    const script = `
      const { createApiClient } = await import('./dist/api/client.js');
      const { startAdminServer } = await import('./dist/admin/server.js');
      await import('./dist/cli/status.js');
      const client = createApiClient({ baseUrl: ${JSON.stringify(sim.url)}, token: 'tok-modules' });
      const now = Date.now();
      const page = await client.getLogs({ modelId: 'm1', fromMs: now - 60_000, toMs: now });
      await client.close();
      const admin = await startAdminServer({ daemon: { status: () => ({}), loopAlive: () => true, storeHealthy: () => true, metrics: { text: async () => '', contentType: 'text/plain' } }, listen: '127.0.0.1:0', maxLagMs: 60_000, logger: { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } });
      await admin.close();
      const { createRequire } = await import('node:module');
      const cjs = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/undici/'));
      const builtins = process.moduleLoadList.filter((m) => /deps\\/undici|NativeModule tls$|NativeModule _tls_wrap$/.test(m));
      console.log(JSON.stringify({ entries: page.entries.length, loaded: [...cjs, ...builtins] }));
    `;
    // Not execFileSync: the simulator answers from this process's event loop.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as { entries: number; loaded: string[] };
    expect(result.entries).toBeGreaterThan(0);
    expect(result.loaded).toEqual([]);
  });
});
