//! Window bounds, paging consistency, end styles and tokens of the simulated logs operation.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { TOKEN, bag, entryMs, fetchWindow, iso, manualClock, post } from './helpers.js';

const LOGS = '/rest/model/logs/get/';
const T0 = Date.parse('2024-05-01T12:00:00.000Z');

let sims: Simulator[] = [];
async function start(o: Partial<SimulatorOptions>): Promise<Simulator> {
  const sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 0, seed: 7, ...o });
  sims.push(sim);
  return sim;
}
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

describe('simulator windows and paging', () => {
  it('includes entries whose time truncated to the millisecond is within the bounds, both ends inclusive', async () => {
    const clock = manualClock(T0);
    const sim = await start({ clock: clock.now });
    const from = Date.parse('2024-05-01T11:00:00.000Z');
    const to = Date.parse('2024-05-01T11:00:01.000Z');
    sim.inject('m1', [
      { time: '2024-05-01T10:59:59.999999999Z', log: 'before', stream: 'stdout' },
      { time: '2024-05-01T11:00:00Z', log: 'at from, no fraction', stream: 'stdout' },
      { time: '2024-05-01T11:00:00.000000001Z', log: 'just after from', stream: 'stdout' },
      { time: '2024-05-01T11:00:00.5Z', log: 'middle', stream: 'stderr' },
      { time: '2024-05-01T11:00:01.000Z', log: 'at to', stream: 'stdout' },
      { time: '2024-05-01T11:00:01.000999999Z', log: 'in the last millisecond', stream: 'stdout' },
      { time: '2024-05-01T11:00:01.001Z', log: 'after', stream: 'stdout' },
    ]);
    const { entries } = await fetchWindow(sim.url, 'm1', from, to);
    expect(entries.map((e) => e.log)).toEqual(['at from, no fraction', 'just after from', 'middle', 'at to', 'in the last millisecond']);
    expect(entries[0]!.time).toBe('2024-05-01T11:00:00Z');
    const single = await fetchWindow(sim.url, 'm1', to, to);
    expect(single.entries.map((e) => e.log)).toEqual(['at to', 'in the last millisecond']);
  });

  it('pages a window into contiguous, time-sorted slices of the page size', async () => {
    const sim = await start({ clock: () => T0, ratePerSec: 20, historyMs: 60_000, pageSize: 100 });
    const truth = sim.groundTruth('m1');
    expect(truth.length).toBeGreaterThan(900);
    const { entries, pages } = await fetchWindow(sim.url, 'm1', T0 - 60_000, T0);
    expect(pages).toBe(Math.ceil(truth.length / 100));
    expect(entries).toEqual(truth.map(({ model_id: _m, ...e }) => e));
  });

  it('never repeats or skips an entry across pages while late entries become visible', async () => {
    const clock = manualClock(T0);
    const sim = await start({ clock: clock.now, ratePerSec: 50, historyMs: 120_000, ingestDelayMs: { min: 0, max: 30_000 }, pageSize: 37, order: 'shuffled' });
    const from = T0 - 120_000;
    const to = T0 + 60_000;
    const atStart = sim.groundTruth('m1').filter((e) => entryMs(e.time) >= from && entryMs(e.time) <= to);
    // 500 ms between pages: many entries become visible (and new ones are produced) mid-fetch.
    const { entries, pages } = await fetchWindow(sim.url, 'm1', from, to, { between: () => clock.advance(500) });
    expect(pages).toBeGreaterThan(50);
    const later = sim.groundTruth('m1').filter((e) => entryMs(e.time) >= from && entryMs(e.time) <= to);
    expect(later.length).toBeGreaterThan(atStart.length);
    expect(bag(entries)).toEqual(bag(atStart));
    // A new fetch of the same window sees what arrived meanwhile.
    const again = await fetchWindow(sim.url, 'm1', from, to);
    expect(bag(again.entries)).toEqual(bag(later));
  });

  it('keeps a fetch consistent when entries are injected inside the window between pages', async () => {
    const clock = manualClock(T0);
    const sim = await start({ clock: clock.now, ratePerSec: 10, historyMs: 60_000, pageSize: 50 });
    const before = sim.groundTruth('m1');
    let n = 0;
    const { entries } = await fetchWindow(sim.url, 'm1', T0 - 60_000, T0, {
      between: () => {
        sim.inject('m1', [{ time: iso(T0 - 59_000 + n++), log: 'injected mid-fetch', stream: 'stdout' }]);
      },
    });
    expect(bag(entries)).toEqual(bag(before));
    expect(sim.groundTruth('m1').filter((e) => e.log === 'injected mid-fetch').length).toBe(n);
  });

  it('serves smaller pages for is_less_logs and counts them', async () => {
    const sim = await start({ clock: () => T0, ratePerSec: 20, historyMs: 60_000, pageSize: 100 });
    const res = await post(sim.url, LOGS, { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0), is_less_logs: true });
    expect(res.json().details).toHaveLength(25);
    const tiny = await start({ clock: () => T0, ratePerSec: 20, historyMs: 60_000, pageSize: 3 });
    const r2 = await post(tiny.url, LOGS, { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0), is_less_logs: true });
    expect(r2.json().details).toHaveLength(1);
    expect(sim.stats().lessLogsRequests).toBe(1);
    const full = await fetchWindow(sim.url, 'm1', T0 - 60_000, T0, { isLessLogs: true });
    expect(bag(full.entries)).toEqual(bag(sim.groundTruth('m1')));
  });

  it('records when the first logs request arrived, until the counters are reset', async () => {
    const clock = manualClock(T0);
    const sim = await start({ clock: clock.now, ratePerSec: 20, historyMs: 60_000, pageSize: 100 });
    expect(sim.stats().firstLogsRequestMs).toBeUndefined();
    await post(sim.url, LOGS, { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0) });
    clock.advance(5_000);
    await post(sim.url, LOGS, { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0) });
    expect(sim.stats()).toMatchObject({ logsRequests: 2, firstLogsRequestMs: T0 });
    sim.resetStats();
    expect(sim.stats()).toMatchObject({ requests: 0, logsRequests: 0, entriesServed: 0, firstLogsRequestMs: undefined });
    clock.advance(1_000);
    await post(sim.url, LOGS, { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0) });
    expect(sim.stats()).toMatchObject({ logsRequests: 1, firstLogsRequestMs: T0 + 6_000 });
  });

  it('draws page sizes from a range', async () => {
    const sim = await start({ clock: () => T0, ratePerSec: 20, historyMs: 60_000, pageSize: { min: 5, max: 15 } });
    const sizes = new Set<number>();
    let token: string | undefined;
    for (let i = 0; i < 20; i++) {
      const res = await post(sim.url, LOGS, { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0), ...(token ? { next_token: token } : {}) });
      const j = res.json();
      sizes.add(j.details.length);
      token = j.next_token;
    }
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(15);
    expect(sizes.size).toBeGreaterThan(3);
  });

  it.each([
    ['absent', (j: Record<string, unknown>) => expect('next_token' in j).toBe(false)],
    ['null', (j: Record<string, unknown>) => expect(j.next_token).toBeNull()],
    ['empty', (j: Record<string, unknown>) => expect(j.next_token).toBe('')],
  ] as const)('signals the last page with end style %s', async (endStyle, check) => {
    const sim = await start({ clock: () => T0, ratePerSec: 5, historyMs: 10_000, pageSize: 20, endStyle });
    const { lastRaw } = await fetchWindow(sim.url, 'm1', T0 - 10_000, T0);
    check(JSON.parse(lastRaw));
    const empty = await post(sim.url, LOGS, { model_id: 'm1', time_from: iso(T0 - 100_000), time_to: iso(T0 - 90_000) });
    expect(empty.json().details).toEqual([]);
    check(empty.json());
  });

  it('cycles through the end styles with rotate', async () => {
    const sim = await start({ clock: () => T0, ratePerSec: 5, historyMs: 10_000, pageSize: 20, endStyle: 'rotate' });
    const ends: string[] = [];
    for (let i = 0; i < 4; i++) {
      const j = JSON.parse((await fetchWindow(sim.url, 'm1', T0 - 10_000, T0)).lastRaw);
      ends.push('next_token' in j ? JSON.stringify(j.next_token) : 'absent');
    }
    expect(ends).toEqual(['absent', 'null', '""', 'absent']);
  });

  it('rejects a token once it is older than the token TTL', async () => {
    const clock = manualClock(T0);
    const sim = await start({ clock: clock.now, ratePerSec: 10, historyMs: 60_000, pageSize: 10, tokenTtlMs: 1_000 });
    const body = { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0) };
    const token = (await post(sim.url, LOGS, body)).json().next_token;
    clock.advance(1_000);
    expect((await post(sim.url, LOGS, { ...body, next_token: token })).status).toBe(200);
    clock.advance(1);
    const res = await post(sim.url, LOGS, { ...body, next_token: token });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ status: 'error', details: 'next_token expired' });
  });

  it('rejects forged tokens and tokens of another model or window', async () => {
    const sim = await start({ clock: () => T0, ratePerSec: 10, historyMs: 60_000, pageSize: 10 });
    const other = await start({ clock: () => T0, ratePerSec: 10, historyMs: 60_000, pageSize: 10 });
    const body = { model_id: 'm1', time_from: iso(T0 - 60_000), time_to: iso(T0) };
    const token: string = (await post(sim.url, LOGS, body)).json().next_token;
    const foreign: string = (await post(other.url, LOGS, body)).json().next_token;
    const [payload, mac] = token.split('.') as [string, string];
    const tampered = Buffer.from(JSON.stringify(JSON.parse(Buffer.from(payload, 'base64url').toString()).map((x: unknown, i: number) => (i === 4 ? 1e9 : x)))).toString('base64url');
    // the MAC's last two characters changed (to AA, or BB when they already are AA)
    const badMac = `${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const forged of ['garbage', `${tampered}.${mac}`, `${payload}.${badMac}`, foreign, '.']) {
      const res = await post(sim.url, LOGS, { ...body, next_token: forged });
      expect(res.status, forged).toBe(400);
      expect(res.json()).toEqual({ status: 'error', details: 'invalid next_token' });
    }
    for (const mismatch of [
      { ...body, model_id: 'm2' },
      { ...body, time_from: iso(T0 - 59_999) },
      { ...body, time_to: iso(T0 - 1) },
    ]) {
      const res = await post(sim.url, LOGS, { ...mismatch, next_token: token });
      expect(res.status).toBe(400);
      expect(res.json().details).toMatch(/next_token/);
    }
  });
});
