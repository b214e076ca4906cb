// The rates of the status: taken over the last ten seconds of once-a-second samples, per
// model and per sink, 0 for a series that did not move, and a series that appears later
// counted from 0.
import { describe, expect, it } from 'vitest';
import { RATE_WINDOW_SECONDS, RecentRates } from '../../src/daemon/rates.js';
import { Metrics } from '../../src/telemetry/metrics.js';

describe('recent rates', () => {
  it('are each series per second over the last window of samples', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const rates = new RecentRates(metrics);
    const m1 = metrics.initModel('m1');
    metrics.initModel('m2');
    metrics.initSink('files');
    await rates.sample(0);
    expect(rates.perSecond('entries', 'm1')).toBe(0);
    // m1: 30 new entries and 2 pages a second for 5 s, then nothing
    for (let s = 1; s <= 5; s++) {
      m1.entriesNew.inc(30);
      m1.pages.inc(2);
      metrics.sinkRecords.inc({ sink: 'files' }, 12);
      metrics.backlogEntries.set({ sink: 'files' }, s * 100);
      await rates.sample(s * 1000);
    }
    expect(rates.perSecond('entries', 'm1')).toBeCloseTo(30);
    expect(rates.perSecond('requests', 'm1')).toBeCloseTo(2);
    expect(rates.perSecond('records', 'files')).toBeCloseTo(12);
    expect(rates.perSecond('backlog', 'files')).toBeCloseTo(100);
    expect(rates.perSecond('entries', 'm2')).toBe(0);
    // a retry and a failed poll are requests too; the error's series is new: counted from 0
    metrics.apiRetries.inc({ model: 'm2' }, 3);
    metrics.pollErrors.inc({ model: 'm2', code: 'MLS_ERR_API_UNAVAILABLE' });
    await rates.sample(6000);
    expect(rates.perSecond('requests', 'm2')).toBeCloseTo(4 / 6);
    // the window moves on: 5 s of 30/s within the last 10 s
    for (let s = 7; s <= 10; s++) await rates.sample(s * 1000);
    expect(rates.perSecond('entries', 'm1')).toBeCloseTo(15);
    // the backlog shrinks
    metrics.backlogEntries.set({ sink: 'files' }, 0);
    await rates.sample(11_000);
    expect(rates.perSecond('backlog', 'files')).toBeCloseTo(-100 / RATE_WINDOW_SECONDS);
    // quiet for a whole window: back to 0
    for (let s = 12; s <= 25; s++) await rates.sample(s * 1000);
    expect(rates.perSecond('entries', 'm1')).toBe(0);
    expect(rates.perSecond('backlog', 'files')).toBe(0);
  });

  it('forget a series that ends (a model removed by a reload), and count it from 0 if it comes back', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const rates = new RecentRates(metrics);
    await rates.sample(0);
    for (let s = 1; s <= 14; s++) {
      metrics.initModel('gone').entriesNew.inc(10);
      await rates.sample(s * 1000);
    }
    expect(rates.perSecond('entries', 'gone')).toBeCloseTo(10);
    await metrics.removeModels(['gone']);
    await rates.sample(15_000);
    expect(rates.perSecond('entries', 'gone')).toBe(0);
    metrics.initModel('gone').entriesNew.inc(8);
    await rates.sample(16_000);
    expect(rates.perSecond('entries', 'gone')).toBeCloseTo(8 / RATE_WINDOW_SECONDS);
  });
});
