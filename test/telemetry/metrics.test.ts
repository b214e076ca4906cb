//! The daemon's metrics: the per-model series every poll touches exist from the model's
//! start; rarer per-model series appear at their first event; the request series.
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
    a.polls.inc(3);
    a.pages.inc(4);
    a.entriesFetched.inc(10);
    a.entriesNew.inc(7);
    a.duplicates.inc(3);
    a.lastSuccess.set(1_795_341_600.5);
    b.up.set(0);
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

  it('a removed model loses every series labelled with it; configured again, it starts from 0 and up', async () => {
    const m = new Metrics({ processMetrics: false });
    const a = m.initModel('a');
    m.initModel('b');
    a.polls.inc(2);
    a.up.set(0);
    a.lastSuccess.set(10);
    m.settle.set({ model: 'a' }, 2);
    // series with more labels than the model: records by level, exceptions by type, errors by code, a histogram
    m.modelRecords.inc({ model: 'a', level: 'info' }, 3);
    m.modelExceptions.inc({ model: 'a', type: 'KeyError' });
    m.entriesInvalid.inc({ model: 'a', reason: 'log_not_string' });
    m.pollErrors.inc({ model: 'a', code: 'MLS_ERR_API_UNAVAILABLE' });
    m.ingestDelay.observe({ model: 'a' }, 1.5);
    m.modelRecords.inc({ model: 'b', level: 'info' });
    await m.removeModels(['a']);
    let text = await m.text();
    expect(text).not.toContain('model="a"');
    expect(lines(text, 'mls_model_log_records_total')).toEqual(['mls_model_log_records_total{model="b",level="info"} 1']);
    expect(lines(text, 'mls_polls_total')).toEqual(['mls_polls_total{model="b"} 0']);
    expect(lines(text, 'mls_model_up')).toEqual(['mls_model_up{model="b"} 1']);
    expect(lines(text, 'mls_model_last_success_timestamp_seconds')).toEqual([]);
    expect(lines(text, 'mls_poll_settle_seconds')).toEqual([]);
    expect(m.initModel('a')).not.toBe(a);
    text = await m.text();
    expect(lines(text, 'mls_polls_total')).toEqual(['mls_polls_total{model="b"} 0', 'mls_polls_total{model="a"} 0']);
    expect(lines(text, 'mls_model_up')).toContain('mls_model_up{model="a"} 1');
  });

  it('counts requests per operation and status class, and abandoned windows per reason from 0', async () => {
    const m = new Metrics({ processMetrics: false });
    let text = await m.text();
    // no request series before the first request
    expect(text).not.toMatch(/^mls_api_request/m);
    m.apiAttempt('logs', 200, 12);
    text = await m.text();
    expect(lines(text, 'mls_api_requests_total')).toEqual(['mls_api_requests_total{operation="logs",status_class="2xx"} 1']);
    expect(lines(text, 'mls_windows_abandoned_total')).toEqual(['mls_windows_abandoned_total{reason="max_pages"} 0', 'mls_windows_abandoned_total{reason="max_duration"} 0']);
  });

  it('classes every status, and puts each latency in its bucket', async () => {
    const m = new Metrics({ processMetrics: false });
    // latencies on bucket bounds, between them, past the last one; statuses of every class
    const attempts: Array<[string, number | 'error', number]> = [
      ['logs', 200, 5], ['logs', 204, 7.5], ['logs', 200, 10], ['logs', 503, 120], ['logs', 'error', 30_000],
      ['settings', 200, 250], ['logs', 429, 1], ['logs', 200, 45_000], ['settings', 404, 3], ['logs', 302, 0], ['logs', 999, 1],
    ];
    for (const [op, status, ms] of attempts) m.apiAttempt(op, status, ms);
    // a latency that is no number: the request is counted all the same
    m.apiAttempt('settings', 500, Number.NaN);
    const text = await m.text();
    expect(lines(text, 'mls_api_requests_total').sort()).toEqual([
      'mls_api_requests_total{operation="logs",status_class="2xx"} 4',
      'mls_api_requests_total{operation="logs",status_class="3xx"} 1',
      'mls_api_requests_total{operation="logs",status_class="4xx"} 1',
      'mls_api_requests_total{operation="logs",status_class="5xx"} 1',
      'mls_api_requests_total{operation="logs",status_class="9xx"} 1',
      'mls_api_requests_total{operation="logs",status_class="error"} 1',
      'mls_api_requests_total{operation="settings",status_class="2xx"} 1',
      'mls_api_requests_total{operation="settings",status_class="4xx"} 1',
      'mls_api_requests_total{operation="settings",status_class="5xx"} 1',
    ]);
    expect(text).toContain('mls_api_request_duration_seconds_bucket{le="0.005",operation="logs"} 4');
    expect(text).toContain('mls_api_request_duration_seconds_bucket{le="0.01",operation="logs"} 6');
    expect(text).toContain('mls_api_request_duration_seconds_bucket{le="30",operation="logs"} 8');
    expect(text).toContain('mls_api_request_duration_seconds_bucket{le="+Inf",operation="logs"} 9');
    expect(text).toContain('mls_api_request_duration_seconds_count{operation="settings"} 2');
  });
});
