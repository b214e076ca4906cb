//! Header, auth, body and timestamp checks of the simulated service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { TOKEN, iso, post } from './helpers.js';

const LOGS = '/rest/model/logs/get/';
const NOW = Date.parse('2024-05-01T12:00:00.000Z');

describe('simulator request checks', () => {
  let sim: Simulator;
  const window = { model_id: 'm1', time_from: iso(NOW - 60_000), time_to: iso(NOW) };

  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 10, historyMs: 60_000, seed: 1, clock: () => NOW });
  });
  afterAll(() => sim.close());

  it('answers a valid request with success and entries', async () => {
    const res = await post(sim.url, LOGS, window);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json().status).toBe('success');
    expect(res.json().details.length).toBeGreaterThan(0);
  });

  it('answers 404 JSON for unknown paths, including a missing trailing slash', async () => {
    for (const path of ['/rest/model/logs/get', '/nope/', '/rest/model/logs/get/extra/']) {
      const res = await post(sim.url, path, window);
      expect(res.status).toBe(404);
      expect(res.json().status).toBe('error');
    }
  });

  it('answers 405 to methods other than POST', async () => {
    const res = await post(sim.url, LOGS, undefined, {}, 'GET');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  it('answers 415 without Content-Type application/json, and accepts a charset parameter', async () => {
    expect((await post(sim.url, LOGS, window, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(sim.url, LOGS, window, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
  });

  it('answers 401 Invalid token to a wrong, missing or Bearer-prefixed token', async () => {
    for (const authorization of ['wrong', '', `Bearer ${TOKEN}`, TOKEN.toUpperCase()]) {
      const res = await post(sim.url, LOGS, window, { authorization });
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ status: 'error', details: 'Invalid token' });
    }
  });

  it('accepts Bearer only when asked to', async () => {
    const other = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 0, acceptBearer: true });
    try {
      expect((await post(other.url, LOGS, window, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await post(other.url, LOGS, window)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('answers 400 to a body that is not a JSON object', async () => {
    for (const body of ['{not json', '[1,2]', 'null', '"x"']) {
      const res = await post(sim.url, LOGS, body);
      expect(res.status).toBe(400);
      expect(res.json().status).toBe('error');
    }
  });

  it('answers 404 Model not found for an unknown model, 400 for a missing one', async () => {
    const res = await post(sim.url, LOGS, { ...window, model_id: 'ghost' });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ status: 'error', details: 'Model not found' });
    expect((await post(sim.url, LOGS, { time_from: window.time_from, time_to: window.time_to })).status).toBe(400);
  });

  it('accepts only timestamps with exactly three fractional digits and a Z', async () => {
    const bad = [
      '2024-05-01T12:00:00Z',
      '2024-05-01T12:00:00.000000Z',
      '2024-05-01T12:00:00.000',
      '2024-05-01T12:00:00.000+00:00',
      '2024-05-01 12:00:00.000Z',
      '2024-02-30T12:00:00.000Z',
      '2024-05-01T25:00:00.000Z',
    ];
    for (const t of bad) {
      const res = await post(sim.url, LOGS, { ...window, time_from: t });
      expect(res.status, t).toBe(400);
      expect(res.json().details).toMatch(/time_from/);
      expect((await post(sim.url, LOGS, { ...window, time_to: t })).json().details).toMatch(/time_to/);
    }
    expect((await post(sim.url, LOGS, { ...window, time_from: 1714564800000 })).status).toBe(400);
  });

  it('answers 400 when time_from is after time_to, and accepts them equal', async () => {
    const res = await post(sim.url, LOGS, { ...window, time_from: iso(NOW), time_to: iso(NOW - 1) });
    expect(res.status).toBe(400);
    expect(res.json().details).toMatch(/time_from/);
    expect((await post(sim.url, LOGS, { ...window, time_from: iso(NOW), time_to: iso(NOW) })).status).toBe(200);
  });

  it('answers 400 to an is_less_logs or next_token of the wrong type', async () => {
    expect((await post(sim.url, LOGS, { ...window, is_less_logs: 'yes' })).status).toBe(400);
    expect((await post(sim.url, LOGS, { ...window, next_token: 5 })).status).toBe(400);
  });

  it('treats next_token null or "" as a first page', async () => {
    const first = await post(sim.url, LOGS, window);
    expect((await post(sim.url, LOGS, { ...window, next_token: null })).text).toBe(first.text);
    expect((await post(sim.url, LOGS, { ...window, next_token: '' })).text).toBe(first.text);
  });

  it('counts requests per status', () => {
    const s = sim.stats();
    expect(s.requests).toBeGreaterThan(10);
    expect(s.byStatus['401']).toBeGreaterThanOrEqual(4);
    expect(s.byStatus['200']).toBeGreaterThan(0);
  });

  it('rejects invalid options with a message naming the option', async () => {
    await expect(startSimulator({ token: '', models: ['a'], ratePerSec: 1 })).rejects.toThrow(/token/);
    await expect(startSimulator({ token: 't', models: ['a'], ratePerSec: -1 })).rejects.toThrow(/ratePerSec/);
    await expect(startSimulator({ token: 't', models: ['a'], ratePerSec: 1, pageSize: 0 })).rejects.toThrow(/pageSize/);
    await expect(startSimulator({ token: 't', models: ['a'], ratePerSec: 1, ingestDelayMs: { min: 5, max: 1 } })).rejects.toThrow(/ingestDelayMs/);
    await expect(startSimulator({ token: 't', models: ['a', 'a'], ratePerSec: 1 })).rejects.toThrow(/models/);
  });

  it('closes idempotently', async () => {
    const s = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 1 });
    const p1 = s.close();
    expect(s.close()).toBe(p1);
    await p1;
  });
});
