//! `mls settings plan|apply|history` against the simulator, with no daemon running: each
//! model is sent only the fields that changed, in one request; a model that fails is sent
//! again alone by the next apply; bad settings are refused before any request.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { register } from '../../src/cli/settings.js';
import { StateReader } from '../../src/journal/reader.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runCli, type RunResult } from './run-in-process.js';

const TOKEN = 'tok-settings-apply-5e81c2';
let sim: Simulator;
let dir: string;
let config: string;
let statePath: string;
let outputs: string[];

beforeAll(async () => {
  sim = await startSimulator({ token: TOKEN, models: ['a', 'b', 'c'], ratePerSec: 0 });
});
afterAll(() => sim?.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-settings-'));
  config = join(dir, 'mls.yaml');
  statePath = join(dir, 'state.db');
  outputs = [];
  sim.settingsCalls.length = 0;
  sim.failSettings([]);
  sim.setFaults({ slow: 0 });
  sim.resetStats();
});
afterEach(() => {
  // The token is never printed, whatever happened.
  for (const text of outputs) expect(text).not.toContain(TOKEN);
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(models: unknown[], { api, ...extra }: Record<string, unknown> = {}): void {
  writeFileSync(
    config,
    stringify({
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}', ...(api as object) },
      state: { path: statePath },
      ...extra,
      models,
      sinks: [{ name: 'out', type: 'stdout' }],
    }),
  );
}

async function mls(...args: string[]): Promise<RunResult> {
  const r = await runCli(register, ['settings', ...args, '--config', config], { MLS_API_TOKEN: TOKEN });
  outputs.push(r.stdout, r.stderr);
  return r;
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check()).toBe(true);
}

const calls = () => sim.settingsCalls.map((c) => ({ model: c.modelId, data: c.data, status: c.status }));

function applied(): Map<string, Record<string, unknown>> {
  const r = StateReader.open(statePath);
  try {
    return r.settings.appliedAll();
  } finally {
    r.close();
  }
}

const MODELS = [
  { id: 'a', settings: { machine_type: 'gpu-a10' } },
  { id: 'b', settings: { max_replica: 5, is_dedicated: true } },
  { id: 'c' },
];
const DEFAULTS = { model_defaults: { settings: { min_replica: 1, max_replica: 3, scale_down_delay: '5m' } } };

describe('mls settings apply', () => {
  it('first apply sends each model its declared fields in one request; a second apply sends nothing', async () => {
    writeConfig(MODELS, DEFAULTS);
    const plan = await mls('plan', '--detailed-exitcode');
    expect(plan.exitCode).toBe(6);
    expect(plan.stdout).toContain('Plan: 11 fields to send to 3 models');
    expect(calls()).toEqual([]);

    const first = await mls('apply');
    expect(first.exitCode, first.stderr).toBe(0);
    expect(calls()).toEqual([
      { model: 'a', data: { min_replica: 1, max_replica: 3, scale_down_delay: 300, machine_type: 'gpu-a10' }, status: 200 },
      { model: 'b', data: { min_replica: 1, max_replica: 5, scale_down_delay: 300, is_dedicated: true }, status: 200 },
      { model: 'c', data: { min_replica: 1, max_replica: 3, scale_down_delay: 300 }, status: 200 },
    ]);
    expect(first.stdout).toContain('a: applied min_replica=1 max_replica=3 scale_down_delay=300 machine_type="gpu-a10": Model a updated successfully.');
    expect(first.stdout).toContain('settings: 3 applied, 0 up to date, 0 failed');

    const again = await mls('apply');
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('settings: 0 applied, 3 up to date, 0 failed');
    expect(calls()).toHaveLength(3);
    expect((await mls('plan', '--detailed-exitcode')).exitCode).toBe(0);

    const history = await mls('history', '--model', 'b');
    expect(history.stdout.trim().split('\n')).toHaveLength(2);
    expect(history.stdout).toMatch(/\bb\s+applied\s+min_replica=1 max_replica=5 scale_down_delay=300 is_dedicated=true\s+Model b updated successfully\./);
  });

  it('one changed field is the only one sent', async () => {
    writeConfig(MODELS, DEFAULTS);
    expect((await mls('apply')).exitCode).toBe(0);
    writeConfig([MODELS[0], { id: 'b', settings: { max_replica: 7, is_dedicated: true } }, MODELS[2]], DEFAULTS);
    const plan = await mls('plan', '--json', '--detailed-exitcode');
    expect(plan.exitCode).toBe(6);
    const json = JSON.parse(plan.stdout) as { pending: boolean; models: { model_id: string; changes: unknown[]; data: unknown }[] };
    expect(json.pending).toBe(true);
    expect(json.models.map((m) => [m.model_id, m.changes])).toEqual([
      ['a', []],
      ['b', [{ field: 'max_replica', from: 5, to: 7 }]],
      ['c', []],
    ]);
    sim.settingsCalls.length = 0;
    const r = await mls('apply');
    expect(r.exitCode).toBe(0);
    expect(calls()).toEqual([{ model: 'b', data: { max_replica: 7 }, status: 200 }]);
    expect(applied().get('b')).toEqual({ min_replica: 1, max_replica: 7, scale_down_delay: 300, is_dedicated: true });
  });

  it('a model that fails does not stop the others; the next apply sends it alone', async () => {
    writeConfig(MODELS, DEFAULTS);
    sim.failSettings(['b'], { status: 400, details: 'machine pool exhausted' });
    const r = await mls('apply');
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toContain('b: NOT applied');
    expect(r.stdout).toContain('settings: 2 applied, 0 up to date, 1 failed');
    expect(r.stderr).toMatch(/settings not applied for 1 model: b \(.*machine pool exhausted\)/);
    expect(calls().map((c) => [c.model, c.status])).toEqual([
      ['a', 200],
      ['b', 400],
      ['c', 200],
    ]);
    expect([...applied().keys()].sort()).toEqual(['a', 'c']);

    sim.failSettings([]);
    sim.settingsCalls.length = 0;
    const retry = await mls('apply');
    expect(retry.exitCode, retry.stderr).toBe(0);
    expect(calls()).toEqual([{ model: 'b', data: { min_replica: 1, max_replica: 5, scale_down_delay: 300, is_dedicated: true }, status: 200 }]);
    const history = await mls('history', '--model', 'b');
    expect(history.stdout).toMatch(/failed .*machine pool exhausted[\s\S]*applied /);
  });

  it('a request that timed out after it was sent counts as not applied', async () => {
    writeConfig([{ id: 'a', settings: { min_replica: 2 } }], { api: { timeouts: { headers: '200ms' }, retry: { deadline: '300ms' } } });
    sim.setFaults({ slow: 1, slowMs: 1_000 });
    const r = await mls('apply');
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toContain('a: NOT applied min_replica=2');
    // The service did take the request (it answers once its delay is over); mls cannot know.
    await waitFor(() => calls().some((c) => c.status === 200));
    expect(applied().get('a')).toBeUndefined();
    sim.setFaults({ slow: 0 });
    sim.settingsCalls.length = 0;
    expect((await mls('apply')).exitCode).toBe(0);
    expect(calls()).toEqual([{ model: 'a', data: { min_replica: 2 }, status: 200 }]);
  });

  it('bad settings are refused before any request, naming each path (exit 78)', async () => {
    writeConfig([{ id: 'a', settings: { min_replica: 4, max_replica: 2 } }, { id: 'b', settings: { container_concurrency: -1, colour: 'red' } }]);
    for (const cmd of [['apply'], ['plan']]) {
      const r = await mls(...cmd);
      expect(r.exitCode).toBe(78);
      expect(r.stderr).toContain('models[0].settings.min_replica: 4 exceeds max_replica 2');
      expect(r.stderr).toContain('models[1].settings.container_concurrency: -1 is too small');
      expect(r.stderr).toContain('models[1].settings.colour: unknown key');
    }
    expect(sim.stats().settingsRequests).toBe(0);
  });

  it('--all sends every declared field again; --model limits to a model; --dry-run and --record-only send nothing', async () => {
    writeConfig(MODELS, DEFAULTS);
    const dry = await mls('apply', '--dry-run');
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout).toContain('Dry run, nothing sent: 11 fields to send to 3 models');
    expect(calls()).toEqual([]);

    const adopt = await mls('apply', '--record-only', '--model', 'a', '--model', 'c');
    expect(adopt.exitCode).toBe(0);
    expect(adopt.stdout).toContain('a: recorded as applied, not sent');
    expect(calls()).toEqual([]);
    expect([...applied().keys()].sort()).toEqual(['a', 'c']);

    const all = await mls('apply', '--all', '--model', 'a');
    expect(all.exitCode).toBe(0);
    expect(calls()).toEqual([{ model: 'a', data: { min_replica: 1, max_replica: 3, scale_down_delay: 300, machine_type: 'gpu-a10' }, status: 200 }]);

    const unknown = await mls('apply', '--model', 'zz');
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('--model zz: no such model in the config (models: a, b, c)');
  });
});
