//! Each injected fault of the simulator, and that a faulty answer consumes nothing.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { readJsonPage } from '../../src/api/page/json.js';
import { TOKEN, fetchWindow, iso, post } from './helpers.js';

const LOGS = '/rest/model/logs/get/';
const SETTINGS = '/rest/model/settings/update/';
const T0 = Date.parse('2024-05-01T12:00:00.000Z');
const WINDOW = { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0) };

let sims: Simulator[] = [];
async function start(o: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  const sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 10, historyMs: 60_000, pageSize: 50, seed: 3, clock: () => T0, ...o });
  sims.push(sim);
  return sim;
}
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

describe('simulator faults', () => {
  it('answers 500 with a JSON error', async () => {
    const sim = await start({ faults: { error500: 1 } });
    const res = await post(sim.url, LOGS, WINDOW);
    expect(res.status).toBe(500);
    expect(res.json().status).toBe('error');
    expect(sim.stats().faultsInjected.error500).toBe(1);
  });

  it('answers 503 and 429 with Retry-After in seconds', async () => {
    const sim = await start({ faults: { error503: 1, retryAfter: 7 } });
    const res = await post(sim.url, LOGS, WINDOW);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('7');
    sim.setFaults({ error503: 0, error429: 1 });
    const r2 = await post(sim.url, LOGS, WINDOW);
    expect(r2.status).toBe(429);
    expect(r2.headers['retry-after']).toBe('7');
  });

  it('announces Retry-After as an HTTP date from the simulator clock', async () => {
    const sim = await start({ faults: { error429: 1, retryAfter: 30, retryAfterStyle: 'date' } });
    const res = await post(sim.url, LOGS, WINDOW);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe(new Date(T0 + 30_000).toUTCString());
  });

  it('mixes both Retry-After styles', async () => {
    const sim = await start({ faults: { error503: 1, retryAfter: 2, retryAfterStyle: 'mixed' } });
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) seen.add(/^\d+$/.test(String((await post(sim.url, LOGS, WINDOW)).headers['retry-after'])) ? 'seconds' : 'date');
    expect(seen).toEqual(new Set(['seconds', 'date']));
  });

  it('cuts a body short and drops the connection', async () => {
    const sim = await start({ faults: { truncated: 1 } });
    const attempt = async (): Promise<string> => {
      const res = await request(sim.url + LOGS, { method: 'POST', headers: { 'content-type': 'application/json', authorization: TOKEN }, body: JSON.stringify(WINDOW) });
      expect(res.statusCode).toBe(200);
      return res.body.text();
    };
    await expect(attempt()).rejects.toThrow();
    expect(sim.stats().faultsInjected.truncated).toBe(1);
    expect(sim.stats().entriesServed).toBe(0);
  });

  it('answers 200 with an HTML body', async () => {
    const sim = await start({ faults: { html200: 1 } });
    const res = await post(sim.url, LOGS, WINDOW);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/^<html>.*<\/html>$/s);
    expect(() => res.json()).toThrow();
  });

  it('answers normally after a delay when slow', async () => {
    const sim = await start({ faults: { slow: 1, slowMs: 300 } });
    const normal = await start();
    const t = performance.now();
    const res = await post(sim.url, LOGS, WINDOW);
    expect(performance.now() - t).toBeGreaterThanOrEqual(290);
    expect(res.status).toBe(200);
    expect(res.json().details).toEqual((await post(normal.url, LOGS, WINDOW)).json().details);
  });

  it('injects faults into settings updates too', async () => {
    const sim = await start({ faults: { error500: 1 } });
    const res = await post(sim.url, SETTINGS, { model_id: 'm1', data: { min_replica: 1 } });
    expect(res.status).toBe(500);
    expect(sim.settingsUpdates).toEqual([]);
    sim.setFaults({ error500: 0, truncated: 1 });
    await expect(post(sim.url, SETTINGS, { model_id: 'm1', data: { min_replica: 1 } })).rejects.toThrow();
    expect(sim.settingsUpdates).toEqual([]);
  });

  it('lets a client that retries every faulty answer fetch the whole window exactly once', async () => {
    const sim = await start({ faults: { error500: 0.1, error503: 0.1, error429: 0.1, truncated: 0.1, html200: 0.1, slow: 0.05, slowMs: 5, retryAfter: 0 }, endStyle: 'rotate' });
    const entries: unknown[] = [];
    let token: string | undefined;
    let ends = 0;
    for (let attempts = 0; attempts < 1000; attempts++) {
      const body = { ...WINDOW, ...(token ? { next_token: token } : {}) };
      let res;
      try {
        res = await post(sim.url, LOGS, body);
      } catch {
        continue;
      }
      if (res.status !== 200 || !res.headers['content-type']?.toString().startsWith('application/json')) continue;
      const j = res.json();
      entries.push(...j.details);
      if (!j.next_token) {
        ends++;
        break;
      }
      token = j.next_token;
    }
    expect(ends).toBe(1);
    const s = sim.stats();
    expect(Object.values(s.faultsInjected).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
    expect(entries).toEqual(sim.groundTruth('m1').map(({ model_id: _m, ...e }) => e));
    expect(s.entriesServed).toBe(entries.length);
    // The end style advanced once, for the single complete last page.
    sim.setFaults({ error500: 0, error503: 0, error429: 0, truncated: 0, html200: 0, slow: 0 });
    const last = JSON.parse((await fetchWindow(sim.url, 'm1', T0 - 60_000, T0)).lastRaw);
    expect(last.next_token).toBeNull();
  });

  it('serves a share of the entries off the spec, each alike at every read, as the ground truth says a reader keeps them', async () => {
    const sim = await start({ offSpecRate: 0.3, ratePerSec: 20, pageSize: 2000, order: 'shuffled' });
    const read = async () => (await post(sim.url, LOGS, WINDOW)).text;
    const first = await read();
    const page = readJsonPage(Buffer.from(first), 200);
    const truth = sim.groundTruth('m1');
    const key = (e: { time: string; stream: string; log: string }) => JSON.stringify([e.time, e.stream, e.log]);
    expect(page.entries.map(key).sort()).toEqual(truth.map(key).sort());
    const codes = page.keys(new BigInt64Array(page.count), new Float64Array(page.count))!;
    const reasons = ['not_an_object', 'time_unparsable', 'stream_not_string', 'log_not_string'];
    const byKey = new Map(truth.map((e) => [key(e), e.off_spec?.reason ?? 'none']));
    page.entries.forEach((e, i) => expect(codes[i] === 0 ? 'none' : reasons[codes[i]! - 1], key(e)).toBe(byKey.get(key(e))));
    const offSpec = truth.filter((e) => e.off_spec);
    expect(offSpec.length / truth.length).toBeGreaterThan(0.2);
    expect(offSpec.length / truth.length).toBeLessThan(0.4);
    expect(new Set(offSpec.map((e) => e.off_spec!.reason))).toEqual(new Set(reasons));
    for (const e of offSpec) expect(e.off_spec!.time).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // The same bytes for every entry at the next read (the page's order is shuffled anew).
    const entriesOf = (text: string) => (JSON.parse(text) as { details: unknown[] }).details.map((d) => JSON.stringify(d)).sort();
    expect(entriesOf(await read())).toEqual(entriesOf(first));
    // None by default.
    const plain = await start({ seed: 4 });
    expect(plain.groundTruth().some((e) => e.off_spec)).toBe(false);
  });
});
