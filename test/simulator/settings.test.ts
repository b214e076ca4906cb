//! Validation and recording of settings updates by the simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { TOKEN, post } from './helpers.js';

const SETTINGS = '/rest/model/settings/update/';
const T0 = Date.parse('2024-05-01T12:00:00.000Z');

describe('simulator settings updates', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 0, clock: () => T0 });
  });
  afterAll(() => sim.close());

  it('accepts every known field and records the update', async () => {
    const data = {
      min_replica: 0,
      max_replica: 4,
      scale_down_delay: 300,
      inference_time: 60,
      is_dedicated: true,
      machine_type: 'gpu-a100',
      container_concurrency: 8,
      is_input_output_enabled: false,
    };
    const res = await post(sim.url, SETTINGS, { model_id: 'm2', data });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: 'success', details: 'Model m2 updated successfully.' });
    expect(sim.settingsUpdates.at(-1)).toEqual({ modelId: 'm2', data, atMs: T0 });
    expect((await post(sim.url, SETTINGS, { model_id: 'm1', data: {} })).status).toBe(200);
    expect(sim.settingsUpdates).toHaveLength(2);
  });

  it.each([
    [{ min_replica: -1 }, 'min_replica'],
    [{ max_replica: 1.5 }, 'max_replica'],
    [{ scale_down_delay: '30' }, 'scale_down_delay'],
    [{ inference_time: null }, 'inference_time'],
    [{ container_concurrency: true }, 'container_concurrency'],
    [{ is_dedicated: 'true' }, 'is_dedicated'],
    [{ is_input_output_enabled: 1 }, 'is_input_output_enabled'],
    [{ machine_type: 5 }, 'machine_type'],
    [{ min_replica: 1, colour: 'blue' }, 'colour'],
  ])('rejects %j naming the field', async (data, field) => {
    const before = sim.settingsUpdates.length;
    const res = await post(sim.url, SETTINGS, { model_id: 'm1', data });
    expect(res.status).toBe(400);
    expect(res.json().status).toBe('error');
    expect(res.json().details).toContain(field);
    expect(sim.settingsUpdates.length).toBe(before);
  });

  it('rejects a missing or non-object data, and an unknown model', async () => {
    for (const data of [undefined, null, [], 'x', 3]) {
      expect((await post(sim.url, SETTINGS, { model_id: 'm1', data })).status).toBe(400);
    }
    const res = await post(sim.url, SETTINGS, { model_id: 'ghost', data: {} });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ status: 'error', details: 'Model not found' });
    expect((await post(sim.url, SETTINGS, { data: {} })).status).toBe(400);
  });

  it('applies the same header checks as the logs operation', async () => {
    expect((await post(sim.url, SETTINGS, { model_id: 'm1', data: {} }, { authorization: 'nope' })).status).toBe(401);
    expect((await post(sim.url, SETTINGS, { model_id: 'm1', data: {} }, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(sim.url, SETTINGS, undefined, {}, 'GET')).status).toBe(405);
    expect(sim.stats().settingsRequests).toBeGreaterThan(0);
  });
  it('records every call with its answer, and fails the models it is told to until restored', async () => {
    sim.settingsCalls.length = 0;
    sim.failSettings(['m1'], { status: 409, details: 'm1 is being redeployed' });
    const refused = await post(sim.url, SETTINGS, { model_id: 'm1', data: { max_replica: 2 } });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.json())).toContain('m1 is being redeployed');
    expect((await post(sim.url, SETTINGS, { model_id: 'm2', data: { max_replica: 2 } })).status).toBe(200);
    expect((await post(sim.url, SETTINGS, { model_id: 'm2', data: { max_replica: -2 } })).status).toBe(400);
    sim.failSettings([]);
    const updatesBefore = sim.settingsUpdates.length;
    expect((await post(sim.url, SETTINGS, { model_id: 'm1', data: { max_replica: 2 } })).status).toBe(200);
    expect(sim.settingsCalls.map((c) => [c.modelId, c.data, c.status])).toEqual([
      ['m1', { max_replica: 2 }, 409],
      ['m2', { max_replica: 2 }, 200],
      ['m2', { max_replica: -2 }, 400],
      ['m1', { max_replica: 2 }, 200],
    ]);
    expect(sim.settingsUpdates.slice(updatesBefore)).toEqual([{ modelId: 'm1', data: { max_replica: 2 }, atMs: T0 }]);
  });
});
