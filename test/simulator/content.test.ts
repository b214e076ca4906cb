//! Generated content, twins, determinism and the ground truth of the simulator.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { TOKEN, bag, canonical, fetchWindow, manualClock } from './helpers.js';

const T0 = Date.parse('2024-05-01T12:00:00.000Z');

let sims: Simulator[] = [];
async function start(o: Partial<SimulatorOptions>): Promise<Simulator> {
  const sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 20, historyMs: 120_000, seed: 11, clock: () => T0, ...o });
  sims.push(sim);
  return sim;
}
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

const key = (e: { time: string; stream: string; log: string }): string => JSON.stringify([e.time, e.stream, e.log]);

describe('simulator content and ground truth', () => {
  it('gives every model entries sorted by time, timestamps with 0 to 9 fractional digits, none after the clock', async () => {
    const sim = await start({ shortDigitsRate: 0.3 });
    const truth = sim.groundTruth();
    expect(new Set(truth.map((e) => e.model_id))).toEqual(new Set(['m1', 'm2']));
    const digits = new Set<number>();
    for (const id of ['m1', 'm2']) {
      const times = truth.filter((e) => e.model_id === id).map((e) => canonical(e.time));
      expect(times).toEqual([...times].sort());
      expect(times[0]! >= canonical(new Date(T0 - 120_000).toISOString())).toBe(true);
      expect(times.at(-1)! < canonical(new Date(T0).toISOString())).toBe(true);
    }
    for (const e of truth) {
      expect(e.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
      digits.add(e.time.length === 20 ? 0 : e.time.length - 21);
      expect(['stdout', 'stderr']).toContain(e.stream);
    }
    expect(digits.size).toBe(10);
  });

  it('produces multi-line, unicode, empty and 9 KB lines that survive the JSON round trip', async () => {
    const sim = await start({ multilineRate: 0.1, unicodeRate: 0.1, emptyRate: 0.05, longRate: 0.05 });
    const truth = sim.groundTruth('m1');
    expect(truth.some((e) => e.log.includes('\n'))).toBe(true);
    expect(truth.some((e) => /[^\x00-\x7f]/.test(e.log))).toBe(true);
    expect(truth.some((e) => e.log === '')).toBe(true);
    expect(truth.some((e) => e.log.length >= 9000)).toBe(true);
    expect(truth.some((e) => e.log.includes('"') && e.log.includes('\\'))).toBe(true);
    const { entries } = await fetchWindow(sim.url, 'm1', T0 - 120_000, T0);
    expect(entries).toEqual(truth.map(({ model_id: _m, ...e }) => e));
  });

  it('produces hostile lines of every kind at the rate asked, in one-line events only, and serves them', async () => {
    const hostile = (log: string) =>
      [log.length > 50_000 && log.startsWith('{"a":{"a":'), log.length > 6_000_000, /^a{48}!$/.test(log), !log.isWellFormed()].findIndex(Boolean);
    for (const content of ['plain', 'python'] as const) {
      const sim = await start({ content, hostileRate: 0.05, ratePerSec: 5 });
      const truth = sim.groundTruth();
      const kinds = new Set(truth.map((e) => hostile(e.log)));
      expect([...kinds].sort(), content).toEqual([-1, 0, 1, 2, 3]);
      const share = truth.filter((e) => hostile(e.log) >= 0).length / truth.length;
      expect(share, content).toBeGreaterThan(0.02);
      expect(share, content).toBeLessThan(0.1);
      if (content === 'python') expect(sim.tracebackEpisodes().length).toBeGreaterThan(0);
      const { entries } = await fetchWindow(sim.url, 'm1', T0 - 120_000, T0);
      expect(entries).toEqual(truth.filter((e) => e.model_id === 'm1').map(({ model_id: _m, ...e }) => e));
    }
    // Off by default.
    expect((await start({})).groundTruth().filter((e) => hostile(e.log) >= 0)).toEqual([]);
  });

  it('produces genuine identical twins, and serves both copies', async () => {
    const sim = await start({ twinRate: 0.2 });
    const truth = sim.groundTruth('m1');
    const counts = new Map<string, number>();
    for (const e of truth) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
    const twins = [...counts.values()].filter((c) => c >= 2).length;
    expect(twins).toBeGreaterThan(truth.length * 0.1);
    const { entries } = await fetchWindow(sim.url, 'm1', T0 - 120_000, T0);
    expect(bag(entries)).toEqual(bag(truth));
  });

  it('is deterministic for a seed: same entries and same pages', async () => {
    const o = { order: 'shuffled', pageSize: { min: 10, max: 60 }, ingestDelayMs: { min: 0, max: 5_000 }, twinRate: 0.05 } as const;
    const a = await start({ ...o, seed: 42 });
    const b = await start({ ...o, seed: 42 });
    const c = await start({ ...o, seed: 43 });
    expect(a.groundTruth()).toEqual(b.groundTruth());
    expect(a.groundTruth()).not.toEqual(c.groundTruth());
    const pa = await fetchWindow(a.url, 'm2', T0 - 120_000, T0);
    const pb = await fetchWindow(b.url, 'm2', T0 - 120_000, T0);
    expect(pa.entries).toEqual(pb.entries);
    expect(pa.pages).toBe(pb.pages);
  });

  it('keeps plain content the same from one version to the next, as benchmarks compare runs over time', async () => {
    const sim = await start({ seed: 11, ratePerSec: 50, historyMs: 60_000, twinRate: 0.05, ingestDelayMs: { min: 0, max: 2000 }, multilineRate: 0.05, unicodeRate: 0.05, emptyRate: 0.02, longRate: 0.01 });
    const digest = createHash('sha256').update(JSON.stringify(sim.groundTruth())).digest('hex');
    // A deliberate change of plain content updates this digest and says so: benchmark baselines move with it.
    expect(digest).toBe('17535f4ce43053487acfb71c5f1c3dfa3d9273926227783ea80cf17034033661');
  });

  it('gives a model the same entries whatever the other models are', async () => {
    const a = await start({ models: ['m1', 'm2'] });
    const b = await start({ models: ['x', 'm2'] });
    expect(a.groundTruth('m2')).toEqual(b.groundTruth('m2'));
  });

  it('matches the union of everything paged over a full window, with the real clock', async () => {
    const sim = await startSimulator({
      token: TOKEN,
      models: ['m1'],
      ratePerSec: 400,
      historyMs: 5_000,
      ingestDelayMs: { min: 0, max: 150 },
      pageSize: { min: 20, max: 80 },
      order: 'shuffled',
      endStyle: 'rotate',
      twinRate: 0.02,
    });
    sims.push(sim);
    const from = Date.now() - 10_000;
    await new Promise((r) => setTimeout(r, 100));
    sim.stopProducing();
    await new Promise((r) => setTimeout(r, 200));
    const truth = sim.groundTruth('m1');
    const { entries } = await fetchWindow(sim.url, 'm1', from, Date.now());
    expect(truth.length).toBeGreaterThan(1500);
    expect(bag(entries)).toEqual(bag(truth));
  });

  it('keeps producing as the clock advances and stops when told', async () => {
    const clock = manualClock(T0);
    const sim = await start({ clock: clock.now, historyMs: 0, ingestDelayMs: { min: 1_000, max: 1_000 } });
    expect(sim.groundTruth('m1')).toEqual([]);
    clock.advance(10_000);
    const n = sim.groundTruth('m1').length;
    expect(n).toBeGreaterThan(100);
    sim.stopProducing();
    clock.advance(10_000);
    const after = sim.groundTruth('m1').length;
    expect(after).toBeGreaterThan(n);
    clock.advance(10_000);
    expect(sim.groundTruth('m1').length).toBe(after);
  });

  it('shows injected entries after their visibility delay', async () => {
    const clock = manualClock(T0);
    const sim = await start({ clock: clock.now, ratePerSec: 0 });
    sim.inject('m1', [{ time: '2024-05-01T11:59:00.123456Z', log: 'late', stream: 'stderr' }], 5_000);
    expect(sim.groundTruth('m1')).toEqual([]);
    clock.advance(5_000);
    expect(sim.groundTruth('m1')).toEqual([{ model_id: 'm1', time: '2024-05-01T11:59:00.123456Z', log: 'late', stream: 'stderr' }]);
    expect(() => sim.inject('m1', [{ time: 'yesterday', log: '', stream: 'stdout' }])).toThrow(/time/);
    expect(() => sim.inject('nope', [])).toThrow(/nope/);
  });
});
