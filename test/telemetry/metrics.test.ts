//! The daemon's metrics: the per-model series every poll touches are plain numbers per model,
//! exported at scrape time; rarer per-model series appear at their first event.
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/telemetry/metrics.js';

const lines = (text: string, name: string): string[] => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('Metrics', () => {
  it('exports a model\'s poll series from its start, up at 1, and its last success only once there is one', async () => {
    const m = new Metrics({ processMetrics: false });
    m.initModel('a');
    const text = await m.text();
    for (const name of ['mls_polls_total', 'mls_pages_total', 'mls_entries_fetched_total', 'mls_entries_new_total', 'mls_duplicates_dropped_total']) {
      expect(lines(text, name), name).toEqual([`${name}{model="a"} 0`]);
      expect(text).toContain(`# TYPE ${name} counter`);
    }
    expect(lines(text, 'mls_model_up')).toEqual(['mls_model_up{model="a"} 1']);
    expect(text).toContain('# TYPE mls_model_up gauge');
    expect(lines(text, 'mls_model_last_success_timestamp_seconds')).toEqual([]);
    // rarer events: no series per model before the first
    for (const name of ['mls_window_restarts_total', 'mls_token_cycles_total', 'mls_entries_bad_time_total', 'mls_api_retries_total', 'mls_poll_errors_total']) expect(lines(text, name), name).toEqual([]);
  });

  it('reads what the poller wrote into the model\'s counters at each scrape', async () => {
    const m = new Metrics({ processMetrics: false });
    const a = m.initModel('a');
    expect(m.initModel('a')).toBe(a);
    const b = m.initModel('b');
    a.polls += 3;
    a.pages += 4;
    a.entriesFetched += 10;
    a.entriesNew += 7;
    a.duplicates += 3;
    a.lastSuccessSeconds = 1_795_341_600.5;
    b.up = 0;
    const text = await m.text();
    expect(lines(text, 'mls_polls_total')).toEqual(['mls_polls_total{model="a"} 3', 'mls_polls_total{model="b"} 0']);
    expect(lines(text, 'mls_pages_total')).toContain('mls_pages_total{model="a"} 4');
    expect(lines(text, 'mls_entries_fetched_total')).toContain('mls_entries_fetched_total{model="a"} 10');
    expect(lines(text, 'mls_entries_new_total')).toContain('mls_entries_new_total{model="a"} 7');
    expect(lines(text, 'mls_duplicates_dropped_total')).toContain('mls_duplicates_dropped_total{model="a"} 3');
    expect(lines(text, 'mls_model_last_success_timestamp_seconds')).toEqual(['mls_model_last_success_timestamp_seconds{model="a"} 1795341600.5']);
    expect(lines(text, 'mls_model_up')).toEqual(['mls_model_up{model="a"} 1', 'mls_model_up{model="b"} 0']);
    // the JSON form (what the docs and dashboard tests read) has them too
    const json = await m.registry.getMetricsAsJSON();
    expect(json.find((x) => x.name === 'mls_polls_total')).toMatchObject({ type: 'counter', values: [{ labels: { model: 'a' }, value: 3 }, { labels: { model: 'b' }, value: 0 }] });
  });

  it('a removed model loses its series; a counter it still holds no longer shows', async () => {
    const m = new Metrics({ processMetrics: false });
    const a = m.initModel('a');
    m.initModel('b');
    m.settle.set({ model: 'a' }, 2);
    m.removeModel('a');
    a.polls++;
    const text = await m.text();
    expect(lines(text, 'mls_polls_total')).toEqual(['mls_polls_total{model="b"} 0']);
    expect(lines(text, 'mls_poll_settle_seconds')).toEqual([]);
  });

  it('counts requests per operation and status class, and abandoned windows per reason from 0', async () => {
    const m = new Metrics({ processMetrics: false });
    m.requests.attempt('logs', 200, 12);
    const text = await m.text();
    expect(lines(text, 'mls_api_requests_total')).toEqual(['mls_api_requests_total{operation="logs",status_class="2xx"} 1']);
    expect(lines(text, 'mls_windows_abandoned_total')).toEqual(['mls_windows_abandoned_total{reason="max_pages"} 0', 'mls_windows_abandoned_total{reason="max_duration"} 0']);
  });

  it('resetting the registry restarts the counters at 0 and keeps the models up', async () => {
    const m = new Metrics({ processMetrics: false });
    const a = m.initModel('a');
    a.polls = 5;
    a.lastSuccessSeconds = 10;
    m.registry.resetMetrics();
    const text = await m.text();
    expect(lines(text, 'mls_polls_total')).toEqual(['mls_polls_total{model="a"} 0']);
    expect(lines(text, 'mls_model_last_success_timestamp_seconds')).toEqual([]);
    expect(lines(text, 'mls_model_up')).toEqual(['mls_model_up{model="a"} 1']);
  });
});
