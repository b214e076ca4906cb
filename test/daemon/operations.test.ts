//! What the running daemon does with a request over its control socket that no `mls` would
//! send: refused with the path of each bad part and the config's exit code, never a crash
//! or a bare JavaScript error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/types.js';
import { parseConfig } from '../../src/cli/config.js';
import { connectControl } from '../../src/control/client.js';
import { startControlServer } from '../../src/control/server.js';
import { DaemonOperations } from '../../src/daemon/operations.js';
import { StateStore } from '../../src/journal/store.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-ops-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BASE_URL = 'https://api.example.com';

describe('settings.apply over the control socket', () => {
  it('refuses declared: [null], a settings field of the wrong type and a missing model id, each by its path', async () => {
    const store = StateStore.open(join(dir, 'state.db'));
    const config = parseConfig({ api: { base_url: BASE_URL, token: 'tok-ops-test' }, models: [{ id: 'm1' }], sinks: [{ name: 'out', type: 'stdout' }] }, { env: {} });
    // Nothing may reach the service: a refused request sends nothing.
    const client = new Proxy({}, { get: () => () => Promise.reject(new Error('the service was called')) }) as ApiClient;
    const ops = new DaemonOperations({ store, client, logger: pino({ level: 'silent' }), config: () => config, notifySinks: () => {} });
    const path = join(dir, 'state.db.sock');
    const server = await startControlServer({
      path,
      logger: pino({ level: 'silent' }),
      handlers: { 'settings.apply': (args, emit, signal) => ops.applyRequested(args, emit, signal), 'dlq.replay': async (a) => ops.replayDeadLetters(a), 'dlq.purge': async (a) => ops.purgeDeadLetters(a), tap: async () => ({}) },
    });
    const ask = async (args: unknown) => (await connectControl(path, 1_000)).request('settings.apply', args).catch((e: unknown) => e);
    try {
      const cases: Array<[unknown, RegExp]> = [
        [{ baseUrl: BASE_URL, declared: [null] }, /declared\[0\]: expected a mapping/],
        [{ baseUrl: BASE_URL, declared: [{ modelId: 'm1', settings: { min_replica: 'two' } }] }, /declared\[0\]\.settings\.min_replica: /],
        [{ baseUrl: BASE_URL, declared: [{ settings: {} }] }, /declared\[0\]\.modelId: /],
        [{ baseUrl: BASE_URL, declared: [{ modelId: 'm1', settings: { min_replica: 3, max_replica: 1 } }] }, /declared\[0\]\.settings\.min_replica: 3 exceeds max_replica 1/],
        [null, /settings\.apply refused: \(top level\): /],
      ];
      for (const [args, why] of cases) {
        const err = await ask(args);
        expect(err, JSON.stringify(args)).toMatchObject({ code: 'MLS_ERR_CONFIG', exitCode: 78 });
        const message = (err as Error).message;
        expect(message, JSON.stringify(args)).toMatch(why);
        expect(message).not.toMatch(/Cannot read properties|TypeError|\.js:\d+/);
      }
      // the channel still answers
      expect(await (await connectControl(path, 1_000)).request('dlq.purge', { sink: null })).toEqual({ purged: 0 });
    } finally {
      await server.close();
      await ops.stop();
      store.close();
    }
  });
});
