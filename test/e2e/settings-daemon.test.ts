// Settings as code with the daemon running (a real `mls run` child): with settings_apply:
// on_reload it applies the declared settings at start and at SIGHUP; `mls settings apply`
// goes through its control socket (the daemon stays the state file's single writer) and
// sends only what changed; `mls dlq purge` takes the same way.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runMls, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-settings-daemon-77a0d4';
let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-settings-e2e-'));
  sim = await startSimulator({ token: TOKEN, models: ['a', 'b'], ratePerSec: 2, seed: 3 });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('settings while the daemon runs', () => {
  it('applies at start and on reload, and takes applies and dead-letter purges over its control socket', { timeout: 60_000 }, async () => {
    const statePath = join(dir, 'state.db');
    const write = (bMax: number, aType: string) =>
      writeConfig(dir, {
        api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
        state: { path: statePath },
        poll: { interval: '500ms', lookback: '2s', settle: '100ms', start_at: '-2s', max_window: '1m', rate_limit: 'none' },
        settings_apply: 'on_reload',
        model_defaults: { settings: { min_replica: 1, scale_down_delay: '2m' } },
        models: [
          { id: 'a', settings: { machine_type: aType } },
          { id: 'b', settings: { max_replica: bMax } },
        ],
        sinks: [{ name: 'out', type: 'file', path: join(dir, 'out', '{model_id}.ndjson') }],
      });
    const config = write(4, 'cpu-small');
    const env = { MLS_API_TOKEN: TOKEN };
    const updates = () => sim.settingsUpdates.map((u) => ({ model: u.modelId, data: u.data }));

    const daemon = startMls(['run', '--config', config], env);
    try {
      // at start
      await waitFor(() => updates().length === 2, 15_000, 'the daemon to apply the settings at start', 100, daemon.stderr);
      expect(updates()).toEqual([
        { model: 'a', data: { min_replica: 1, scale_down_delay: 120, machine_type: 'cpu-small' } },
        { model: 'b', data: { min_replica: 1, max_replica: 4, scale_down_delay: 120 } },
      ]);
      await waitFor(() => /"model":"b".*model settings applied/.test(daemon.stderr()), 5_000, 'the daemon to log the change');

      // `mls settings apply` while the daemon holds the state file: through its socket
      write(6, 'cpu-small');
      const plan = await runMls(['settings', 'plan', '--config', config, '--detailed-exitcode'], env);
      expect(plan.code, plan.stderr).toBe(6);
      expect(plan.stdout).toContain('~ max_replica: 4 -> 6');
      const apply = await runMls(['settings', 'apply', '--config', config], env);
      expect(apply.code, apply.stderr).toBe(0);
      expect(apply.stdout).toContain('b: applied max_replica=6: Model b updated successfully.');
      expect(apply.stdout).toContain('a: up to date');
      expect(updates().slice(2)).toEqual([{ model: 'b', data: { max_replica: 6 } }]);
      expect(daemon.stderr()).toMatch(/"model":"b","fields":\{"max_replica":6\}.*model settings applied/);
      const noop = await runMls(['settings', 'apply', '--config', config], env);
      expect(noop.stdout).toContain('settings: 0 applied, 2 up to date, 0 failed');
      expect(updates()).toHaveLength(3);

      // SIGHUP: the reloaded config's pending settings are applied
      write(6, 'gpu-a10');
      daemon.child.kill('SIGHUP');
      await waitFor(() => updates().length === 4, 15_000, 'the daemon to apply the settings at reload', 100, daemon.stderr);
      expect(updates()[3]).toEqual({ model: 'a', data: { machine_type: 'gpu-a10' } });

      // dead letters: purge goes through the daemon as well
      const purge = await runMls(['dlq', 'purge', '--config', config], env);
      expect(purge.code, purge.stderr).toBe(0);
      expect(purge.stdout).toContain('0 dead letters purged');

      for (const text of [plan.stdout, plan.stderr, apply.stdout, apply.stderr, daemon.stderr()]) expect(text).not.toContain(TOKEN);
    } finally {
      daemon.child.kill('SIGTERM');
      expect((await daemon.exited).code, daemon.stderr()).toBe(0);
    }
    expect(existsSync(`${statePath}.sock`)).toBe(false);

    // with the daemon stopped the history reads from the file
    const history = await runMls(['settings', 'history', '--config', join(dir, 'mls.yaml'), '--model', 'a'], env);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/a\s+applied\s+min_replica=1 scale_down_delay=120 machine_type="cpu-small"/);
    expect(history.stdout).toMatch(/a\s+applied\s+machine_type="gpu-a10"/);
  });
});
