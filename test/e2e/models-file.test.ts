// `models_file:` with the daemon: the file's models are polled, a SIGHUP reload reads the
// file again and picks up a model added to it, a reload with a broken file keeps the running
// configuration and says where the file is wrong, and `mls validate` checks the file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { readNdjsonTree, runMls, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-models-file-7c41d0';
const env = { MLS_API_TOKEN: TOKEN };
let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-models-file-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2', 'm3'], ratePerSec: 20, historyMs: 20_000, seed: 11 });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('models_file', () => {
  it('is read again at a SIGHUP reload: an added model is polled, a broken file is refused and the running models go on', { timeout: 90_000 }, async () => {
    const out = join(dir, 'out');
    const modelsFile = join(dir, 'models.txt');
    writeFileSync(modelsFile, '# polled besides the inline model\nm2\n');
    const config = writeConfig(dir, {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: join(dir, 'state.db') },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-15s', max_window: '1m', rate_limit: 'none' },
      models: [{ id: 'm1' }],
      // Relative: resolved against the config file's folder.
      models_file: 'models.txt',
      sinks: [{ name: 'files', type: 'file', path: join(out, '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
      shutdown_timeout: '10s',
    });
    const modelsIn = () => new Set(readNdjsonTree(out).map((e) => e.model_id));

    const p = startMls(['run', '--config', config], env);
    try {
      await waitFor(() => modelsIn().has('m1') && modelsIn().has('m2'), 15_000, 'entries of the inline model and of the file', 200, p.stderr);
      expect(modelsIn().has('m3')).toBe(false);

      writeFileSync(modelsFile, '# polled besides the inline model\nm2\nm3\n');
      p.child.kill('SIGHUP');
      await waitFor(() => p.stderr().includes('configuration reloaded'), 10_000, 'the reload', 100, p.stderr);
      await waitFor(() => modelsIn().has('m3'), 15_000, 'entries of the model added to the file', 200, p.stderr);

      // m1 is already listed inline: the reload is refused, naming the file and the line.
      writeFileSync(modelsFile, 'm2\nm3\nm1\n');
      p.child.kill('SIGHUP');
      await waitFor(() => p.stderr().includes('reload rejected'), 10_000, 'the rejection', 100, p.stderr);
      const line = p.stderr().split('\n').find((l) => l.includes('reload rejected'))!;
      expect(line).toContain(`models_file: ${modelsFile}, line 3: model \\"m1\\" is already listed in models[0] of the config file`);
      // The running configuration goes on, with the model the last good file added.
      const before = readNdjsonTree(out).filter((e) => e.model_id === 'm3').length;
      await waitFor(() => readNdjsonTree(out).filter((e) => e.model_id === 'm3').length > before, 15_000, 'm3 to keep being shipped', 200, p.stderr);
      expect(p.child.exitCode).toBeNull();

      // mls validate says the same, and accepts the file once it is fixed.
      const bad = await runMls(['validate', '--config', config], env);
      expect(bad.code).toBe(78);
      expect(bad.stderr).toContain(`${config}: models_file: ${modelsFile}, line 3: model "m1" is already listed`);
      writeFileSync(modelsFile, 'm2\nm3\n');
      const good = await runMls(['validate', '--config', config], env);
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout).toBe('config OK: 3 models, 1 sink (files)\n');
    } finally {
      p.child.kill('SIGTERM');
      const end = await p.exited;
      expect(end.code, p.stderr()).toBe(0);
    }
    expect(p.stderr()).not.toContain(TOKEN);
  });
});
