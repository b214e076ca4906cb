// The client's pool is undici's Pool loaded on its own. It must be the class the package
// exports, and the client must work in a process that never loads the package's index
// (which adds `request` and friends to every dispatcher).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Pool } from '../../src/api/pool.js';
import { startSimulator } from '../../src/simulator/index.js';

describe('undici pool loaded on its own', () => {
  it('is the Pool the package exports', async () => {
    const undici = await import('undici');
    expect(Pool).toBe(undici.Pool);
  });

  it('serves the API client in a process that never loads the undici index', async () => {
    const sim = await startSimulator({ token: 'tok-pool', models: ['m1'], ratePerSec: 50, historyMs: 10_000 });
    try {
      const script = `
        import { createApiClient } from './dist/api/client.js';
        const client = createApiClient({ baseUrl: ${JSON.stringify(sim.url)}, token: 'tok-pool' });
        const now = Date.now();
        const page = await client.getLogs({ modelId: 'm1', fromMs: now - 60_000, toMs: now });
        await client.close();
        const loaded = Object.keys((await import('node:module')).createRequire(import.meta.url).cache).filter((k) => k.includes('/undici/'));
        console.log(JSON.stringify({ entries: page.entries.length, index: loaded.some((k) => k.endsWith('/undici/index.js')) }));
      `;
      // Not execFileSync: the simulator answers from this process's event loop.
      const { stdout: out } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      const result = JSON.parse(out.trim().split('\n').pop()!) as { entries: number; index: boolean };
      expect(result.index).toBe(false);
      expect(result.entries).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });
});
