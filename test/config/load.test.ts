//! Parsing the config: defaults, notations, and every problem reported at once.
import { describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import { minimal, problemsOf } from './config-fixture.js';

describe('defaults', () => {
  test('a minimal config is completed with the documented defaults, in ms and bytes', () => {
    const c = parseConfig(minimal(), { env: {}, baseDir: '/etc/mls' });
    expect(c.api).toEqual({
      base_url: 'https://api.example.com',
      token: 'test-token',
      auth_scheme: 'raw',
      timeouts: { connect: 10_000, headers: 30_000, body: 60_000 },
      retry: { deadline: 120_000, base_delay: 250, max_delay: 30_000 },
      max_response_bytes: 64 * 1024 * 1024,
      insecure_skip_verify: false,
    });
    expect(c.state.path).toBe('/var/lib/mls/state.db');
    expect(c.poll).toEqual({
      interval: 10_000,
      lookback: 300_000,
      settle: 'auto',
      start_at: { kind: 'relative', ms: 3_600_000 },
      max_window: 3_600_000,
      concurrency: 8,
      rate_limit: { count: 20, perMs: 1_000 },
      jitter: 0.1,
      auth_retry: 30_000,
      reread: { mode: 'sparse', ages: [30_000] },
      window_limits: { max_pages: 5_000, max_duration: 600_000 },
    });
    expect(c.models).toEqual([{ id: 'model-a', resource: {} }]);
    expect(c.sinks[0]).toEqual({
      name: 'console',
      type: 'stdout',
      batch: { max_entries: 20_000, max_bytes: 8 * 1024 * 1024, max_delay: 1000 },
      retry: { base_delay: 500, max_delay: 60_000 },
      raw: false,
    });
    expect(c.processing).toEqual({
      multiline: { rule: 'python', max_lines: 500, max_bytes: 256 * 1024, max_gap: 2_000 },
      levels: { rules: [] },
      redact: { secrets: false, rules: [] },
      exceptions: { max_types_per_model: 20 },
    });
    expect(c.buffer).toEqual({ max_entries: 1_000_000, max_bytes: 1024 ** 3, when_full: 'block' });
    expect(c.admin).toBeUndefined();
    expect(c.health).toEqual({ max_lag: 300_000 });
    expect(c.shutdown_timeout).toBe(30_000);
    expect(c.log).toEqual({ level: 'info', format: 'auto' });
  });

  test('sink types get their own defaults', () => {
    const raw = minimal();
    (raw.sinks as unknown[]) = [
      { name: 'f', type: 'file', path: '/out/{model_id}.ndjson' },
      { name: 'w', type: 'webhook', url: 'https://h.example.com/x' },
      { name: 'o', type: 'otlp', endpoint: 'http://localhost:4318/' },
      { name: 'm', type: 'module', path: '/opt/sink.js' },
    ];
    const [file, hook, otlp, mod] = parseConfig(raw, { env: {} }).sinks;
    // batches are requests for network and custom sinks, only write and fsync units for files and stdout
    expect([file, hook, otlp, mod].map((s) => s!.batch)).toEqual([
      { max_entries: 20_000, max_bytes: 8 * 1024 * 1024, max_delay: 1000 },
      { max_entries: 1000, max_bytes: 1024 * 1024, max_delay: 1000 },
      { max_entries: 1000, max_bytes: 1024 * 1024, max_delay: 1000 },
      { max_entries: 1000, max_bytes: 1024 * 1024, max_delay: 1000 },
    ]);
    expect(file).toMatchObject({ fsync: 'batch', compress: 'none', file_mode: 0o600, dir_mode: 0o700 });
    expect(file).not.toHaveProperty('rotate');
    expect(hook).toMatchObject({ format: 'ndjson', compression: 'none', headers: {}, timeout: 30_000, concurrency: 1 });
    expect(otlp).toMatchObject({ endpoint: 'http://localhost:4318', protocol: 'http/protobuf', compression: 'gzip', timeout: 10_000, resource: {}, headers: {} });
    expect(mod).toMatchObject({ path: '/opt/sink.js', options: {} });
  });

  test('notations are parsed: durations, sizes, rates, start points, modes', () => {
    const raw = {
      ...minimal(),
      api: { base_url: 'http://localhost:8080/prefix/', token: 't0k3n', max_response_bytes: 1000, timeouts: { connect: '1.5s' } },
      poll: { interval: '1m30s', rate_limit: 'none', start_at: '2026-01-01T00:00:00Z', settle: '0s', lookback: '0s' },
      models: [{ id: 'a', start_at: 'now', is_less_logs: true, resource: { 'service.name': 'svc', version: 2 } }, { id: 'b', start_at: '-90m' }],
      sinks: [{ name: 'f', type: 'file', path: '/o/%Y.ndjson', file_mode: '640', dir_mode: '0o750', rotate: { max_bytes: '100MB', max_age: '1d' } }],
      buffer: { max_bytes: '512KiB' },
      admin: { listen: '[::1]:9464' },
    };
    const c = parseConfig(raw, { env: {} });
    expect(c.api.base_url).toBe('http://localhost:8080/prefix');
    expect(c.api.max_response_bytes).toBe(1000);
    expect(c.api.timeouts.connect).toBe(1500);
    expect(c.poll.interval).toBe(90_000);
    expect(c.poll.settle).toBe(0);
    expect(c.poll.rate_limit).toBeNull();
    expect(c.poll.start_at).toEqual({ kind: 'absolute', ms: Date.UTC(2026, 0, 1) });
    expect(c.models[0]).toEqual({ id: 'a', start_at: { kind: 'now' }, is_less_logs: true, resource: { 'service.name': 'svc', version: '2' } });
    expect(c.models[1]!.start_at).toEqual({ kind: 'relative', ms: 5_400_000 });
    const f = c.sinks[0]!;
    expect(f.type === 'file' && [f.file_mode, f.dir_mode, f.rotate]).toEqual([0o640, 0o750, { max_bytes: 100_000_000, max_age: 86_400_000 }]);
    expect(c.buffer.max_bytes).toBe(512 * 1024);
    expect(c.admin?.listen).toBe('[::1]:9464');
  });

  test('rate limits accept N/s, N/m, N/h and 0', () => {
    const rate = (rate_limit: unknown) => parseConfig({ ...minimal(), poll: { rate_limit } }, { env: {} }).poll.rate_limit;
    expect(rate('5/s')).toEqual({ count: 5, perMs: 1000 });
    expect(rate('600/m')).toEqual({ count: 600, perMs: 60_000 });
    expect(rate('3600/h')).toEqual({ count: 3600, perMs: 3_600_000 });
    expect(rate(0)).toBeNull();
  });

  test('settle is auto or a duration; min_interval is a duration not longer than interval', () => {
    const poll = (p: Record<string, unknown>) => parseConfig({ ...minimal(), poll: p }, { env: {} }).poll;
    expect(poll({ settle: 'auto' }).settle).toBe('auto');
    expect(poll({ settle: ' auto ' }).settle).toBe('auto');
    expect(poll({ settle: '2s' }).settle).toBe(2_000);
    expect(poll({}).min_interval).toBeUndefined();
    expect(poll({ min_interval: '500ms', interval: '10s' }).min_interval).toBe(500);
    expect(poll({ min_interval: '10s', interval: '10s' }).min_interval).toBe(10_000);
    expect(problemsOf(() => poll({ settle: 'soon' }))).toEqual([
      'poll.settle: "soon" is not a duration; use e.g. 500ms, 10s, 5m, 1h, 1d, or auto to learn it per model',
    ]);
    expect(problemsOf(() => poll({ settle: 2 }))).toEqual([expect.stringMatching(/^poll\.settle: 2 has no unit; .*, or auto to learn it per model$/)]);
    expect(problemsOf(() => poll({ min_interval: '0s' }))).toEqual([expect.stringMatching(/^poll\.min_interval: "0s" must be longer than 0/)]);
    expect(problemsOf(() => poll({ min_interval: '20s', interval: '10s' }))).toEqual([
      expect.stringMatching(/^poll\.min_interval: is longer than poll\.interval \(min_interval "20s", interval "10s"\); .*lower min_interval or raise interval$/),
    ]);
    // The default interval counts too.
    expect(problemsOf(() => poll({ min_interval: '11s' }))).toEqual([expect.stringMatching(/^poll\.min_interval: is longer than poll\.interval/)]);
  });
});

describe('all problems at once', () => {
  test('every problem is listed, each with its path, in one error', () => {
    const problems = problemsOf(() =>
      parseConfig(
        {
          api: { base_url: 'nope', token: 'test-token', timeouts: { conect: '1s' } },
          poll: { interval: '10 seconds', lookback: '2h' },
          models: [{ id: 'a' }, { id: '' }, { id: 'a' }],
          sinks: [{ name: 'x', type: 'file' }, { name: 'y', type: 'stdout', models: ['zz'] }],
        },
        { env: {} },
      ),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^api\.base_url: "nope" is not a URL/),
        expect.stringMatching(/^api\.timeouts\.conect: unknown key; did you mean connect\?/),
        expect.stringMatching(/^poll\.interval: "10 seconds" is not a duration/),
        expect.stringMatching(/^poll\.lookback: must be shorter than poll\.max_window/),
        'models[1].id: expected a non-empty string',
        expect.stringMatching(/^models\[2\]\.id: "a" is already the id of models\[0\]/),
        'sinks[0].path: is required',
        expect.stringMatching(/^sinks\[1\]\.models\[0\]: "zz" is not a configured model id/),
      ]),
    );
    expect(problems).toHaveLength(8);
  });

  test('the error message lists the problems too', () => {
    const raw = { ...minimal(), poll: { interval: 10 } };
    expect(() => parseConfig(raw, { env: {}, source: 'mls.yaml' })).toThrow(/invalid configuration in mls\.yaml: 1 problem\n {2}poll\.interval: 10 has no unit/);
  });

  test('a missing token is reported along with other problems', () => {
    const raw = { ...minimal(), api: { base_url: 'https://api.example.com' }, poll: { interval: 'x' } };
    const problems = problemsOf(() => parseConfig(raw, { env: {} }));
    expect(problems).toHaveLength(2);
    expect(problems[1]).toBe('api.token: no token: set api.token, api.token_file, MLS_API_TOKEN or a systemd credential');
  });
});
