//! Loading the config: defaults, notations, interpolation, secrets, token resolution, paths, freezing.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { configSecrets, loadConfig, parseConfig } from '../../src/cli/config.js';
import { ConfigError } from '../../src/errors.js';

const minimal = () => ({
  api: { base_url: 'https://api.example.com', token: 'test-token' },
  models: [{ id: 'model-a' }],
  sinks: [{ name: 'console', type: 'stdout' }],
});

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new temporary folder, removed after the file's tests. */
function tmp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mls-config-'));
  made.push(dir);
  return dir;
}

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
    });
    expect(c.buffer).toEqual({ max_entries: 1_000_000, max_bytes: 1024 ** 3, when_full: 'block' });
    expect(c.admin).toBeUndefined();
    expect(c.health).toEqual({ max_lag: 300_000 });
    expect(c.shutdown_timeout).toBe(30_000);
    expect(c.log).toEqual({ level: 'info' });
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

describe('interpolation', () => {
  const withApi = (api: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ ...minimal(), api: { base_url: 'https://api.example.com', ...api }, ...extra });

  test('${VAR} is replaced in every string value, nested and in lists', () => {
    const raw = {
      ...withApi({ base_url: 'https://${HOST}/${PREFIX}', token: '${TOKEN}' }),
      models: [{ id: '${MODEL}' }],
      sinks: [{ name: 'hook', type: 'webhook', url: 'https://${HOST}/hook', headers: { 'X-Api-Key': 'k-${KEY}' } }],
    };
    const c = parseConfig(raw, { env: { HOST: 'api.example.com', PREFIX: 'v1', TOKEN: 'secret-token', MODEL: 'm1', KEY: 'abc' } });
    expect(c.api.base_url).toBe('https://api.example.com/v1');
    expect(c.api.token).toBe('secret-token');
    expect(c.models[0]!.id).toBe('m1');
    const hook = c.sinks[0]!;
    expect(hook.type === 'webhook' && [hook.url, hook.headers]).toEqual(['https://api.example.com/hook', { 'X-Api-Key': 'k-abc' }]);
  });

  test('${VAR:-default} uses the default when VAR is unset or empty', () => {
    const raw = withApi({ token: 't' }, { poll: { interval: '${INTERVAL:-15s}', lookback: '${LOOKBACK:-1m}' } });
    const c = parseConfig(raw, { env: { LOOKBACK: '' } });
    expect(c.poll.interval).toBe(15_000);
    expect(c.poll.lookback).toBe(60_000);
    expect(parseConfig(raw, { env: { INTERVAL: '20s' } }).poll.interval).toBe(20_000);
  });

  test('number and boolean fields take interpolated strings', () => {
    const raw = {
      ...withApi({ token: 't', insecure_skip_verify: '${INSECURE}' }),
      poll: { concurrency: '${CONC}', jitter: '${JITTER:-0.25}' },
      models: [{ id: 'a', is_less_logs: '${LESS}' }],
    };
    const c = parseConfig(raw, { env: { CONC: '3', INSECURE: 'true', LESS: 'false' } });
    expect([c.poll.concurrency, c.poll.jitter, c.api.insecure_skip_verify, c.models[0]!.is_less_logs]).toEqual([3, 0.25, true, false]);
    expect(problemsOf(() => parseConfig(raw, { env: { CONC: 'many', INSECURE: 'true', LESS: 'no' } }))).toEqual([
      'poll.concurrency: expected a number, got "many"',
      'models[0].is_less_logs: expected true or false, got "no"',
    ]);
  });

  test('$${ is a literal ${', () => {
    const raw = { ...minimal(), sinks: [{ name: 'm', type: 'module', path: '/x.js', options: { template: '$${user}-${WHO}' } }] };
    const sink = parseConfig(raw, { env: { WHO: 'me' } }).sinks[0]!;
    expect(sink.type === 'module' && sink.options).toEqual({ template: '${user}-me' });
  });

  test('keys are not interpolated', () => {
    const raw = { ...minimal(), models: [{ id: 'a', resource: { '${X}': 'v' } }] };
    expect(parseConfig(raw, { env: { X: 'y' } }).models[0]!.resource).toEqual({ '${X}': 'v' });
  });

  test('every unset variable is a problem naming its path and the variable', () => {
    const raw = { ...withApi({ token: '${TOK}' }), models: [{ id: 'a' }, { id: '${M2}' }] };
    expect(problemsOf(() => parseConfig(raw, { env: {} }))).toEqual([
      'api.token: environment variable TOK is not set; set it, or write ${TOK:-default}',
      'models[1].id: environment variable M2 is not set; set it, or write ${M2:-default}',
    ]);
  });

  test('an invalid variable name is a problem', () => {
    const raw = withApi({ token: '${1BAD}' });
    expect(problemsOf(() => parseConfig(raw, { env: {} }))[0]).toMatch(/^api\.token: \$\{1BAD\} is not a variable reference/);
  });
});

describe('secrets stay out of problems', () => {
  const secret = 'super-secret-value-42';

  function messageOf(fn: () => unknown): string {
    try {
      fn();
    } catch (err) {
      return `${(err as Error).message}\n${(err as ConfigError).problems.join('\n')}`;
    }
    throw new Error('expected an error');
  }

  test('an interpolated token echoed by another field is redacted', () => {
    const raw = { ...minimal(), api: { base_url: '${MLS_API_TOKEN}', token: '${MLS_API_TOKEN}' } };
    const msg = messageOf(() => parseConfig(raw, { env: { MLS_API_TOKEN: secret } }));
    expect(msg).toContain('api.base_url: "[REDACTED]" is not a URL');
    expect(msg).not.toContain(secret);
  });

  test('a bad token, signing secret or header value is never echoed', () => {
    const raw = {
      ...minimal(),
      api: { base_url: 'https://api.example.com', token: `${secret}\nx` },
      sinks: [{ name: 'w', type: 'webhook', url: secret, signing_secret: ` `, headers: { 'X-Key': `${secret}\r\n` } }],
    };
    const msg = messageOf(() => parseConfig(raw, { env: {} }));
    expect(msg).toContain('api.token: contains a line break');
    expect(msg).toContain('sinks[0].headers.X-Key: contains a line break');
    expect(msg).toContain('sinks[0].signing_secret: is empty');
    expect(msg).not.toContain('super-secret');
  });

  test('configSecrets lists what the logger must redact', () => {
    const raw = { ...minimal(), sinks: [{ name: 'w', type: 'webhook', url: 'https://h.example.com', signing_secret: 'sign-me', headers: { 'X-Key': 'hdr-value' } }] };
    expect(configSecrets(parseConfig(raw, { env: {} }))).toEqual(['test-token', 'sign-me', 'hdr-value']);
  });
});

describe('token resolution', () => {
  const noToken = () => ({ ...minimal(), api: { base_url: 'https://api.example.com' } });

  test('api.token wins over the environment', () => {
    expect(parseConfig(minimal(), { env: { MLS_API_TOKEN: 'from-env' } }).api.token).toBe('test-token');
  });

  test('api.token_file is read, relative to the config directory, without its trailing newline', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'token'), 'file-token\n');
    const raw = { ...minimal(), api: { base_url: 'https://api.example.com', token_file: './token' } };
    const c = parseConfig(raw, { env: { MLS_API_TOKEN: 'from-env' }, baseDir: dir });
    expect(c.api.token).toBe('file-token');
    expect(c.api.token_file).toBe(path.join(dir, 'token'));
  });

  test('an empty token file is a problem', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'token'), '\n');
    const raw = { ...minimal(), api: { base_url: 'https://api.example.com', token_file: 'token' } };
    expect(problemsOf(() => parseConfig(raw, { env: {}, baseDir: dir }))).toEqual([`api.token_file: ${path.join(dir, 'token')} is empty; write the token into it`]);
  });

  test('without token or token_file, MLS_API_TOKEN is used before the systemd credential', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'mls-api-token'), 'cred-token\n');
    expect(parseConfig(noToken(), { env: { MLS_API_TOKEN: 'env-token', CREDENTIALS_DIRECTORY: dir } }).api.token).toBe('env-token');
    expect(parseConfig(noToken(), { env: { CREDENTIALS_DIRECTORY: dir } }).api.token).toBe('cred-token');
    expect(parseConfig(noToken(), { env: { MLS_API_TOKEN: '', CREDENTIALS_DIRECTORY: dir } }).api.token).toBe('cred-token');
  });

  test('with no token anywhere, the problem says where a token can come from', () => {
    const dir = tmp(); // a credentials directory without the credential
    expect(problemsOf(() => parseConfig(noToken(), { env: { CREDENTIALS_DIRECTORY: dir } }))).toEqual([
      'api.token: no token: set api.token, api.token_file, MLS_API_TOKEN or a systemd credential',
    ]);
  });
});

describe('loadConfig', () => {
  test('relative paths are resolved against the directory of the config file', async () => {
    const dir = tmp();
    mkdirSync(path.join(dir, 'etc'));
    writeFileSync(
      path.join(dir, 'etc', 'mls.yaml'),
      `api:
  base_url: https://api.example.com
  token_file: secrets/token
  ca_file: ca.pem
state:
  path: ../state/mls.db
models: [{ id: model-a }]
sinks:
  - { name: archive, type: file, path: 'out/{model_id}/%Y-%m-%d.ndjson' }
  - { name: local, type: module, path: ./sink.js }
  - { name: pkg, type: module, path: some-sink-package }
  - { name: hook, type: webhook, url: 'https://h.example.com', ca_file: /abs/ca.pem }
  - name: otel
    type: otlp
    endpoint: https://collector:4318
    tls: { ca_file: tls/ca.pem, cert_file: tls/cert.pem, key_file: tls/key.pem }
`,
    );
    mkdirSync(path.join(dir, 'etc', 'secrets'));
    writeFileSync(path.join(dir, 'etc', 'secrets', 'token'), 'tok\n');
    const etc = path.join(dir, 'etc');
    const c = await loadConfig(path.join(etc, 'mls.yaml'), {});
    expect(c.api.token).toBe('tok');
    expect(c.api.token_file).toBe(path.join(etc, 'secrets', 'token'));
    expect(c.api.ca_file).toBe(path.join(etc, 'ca.pem'));
    expect(c.state.path).toBe(path.join(dir, 'state', 'mls.db'));
    const [archive, local, pkg, hook, otel] = c.sinks;
    expect(archive!.type === 'file' && archive!.path).toBe(path.join(etc, 'out', '{model_id}', '%Y-%m-%d.ndjson'));
    expect(local!.type === 'module' && local!.path).toBe(path.join(etc, 'sink.js'));
    expect(pkg!.type === 'module' && pkg!.path).toBe('some-sink-package');
    expect(hook!.type === 'webhook' && hook!.ca_file).toBe('/abs/ca.pem');
    expect(otel!.type === 'otlp' && otel!.tls).toEqual({
      ca_file: path.join(etc, 'tls', 'ca.pem'),
      cert_file: path.join(etc, 'tls', 'cert.pem'),
      key_file: path.join(etc, 'tls', 'key.pem'),
      insecure: false,
    });
  });

  test('the result is deeply frozen', async () => {
    const dir = tmp();
    const file = path.join(dir, 'mls.yaml');
    writeFileSync(file, 'api: { base_url: "https://a.example.com", token: t }\nmodels: [{ id: a }]\nsinks: [{ name: s, type: stdout }]\n');
    const c: Config = await loadConfig(file, {});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.poll.start_at)).toBe(true);
    expect(Object.isFrozen(c.models)).toBe(true);
    expect(Object.isFrozen(c.sinks[0]!.batch)).toBe(true);
    expect(() => {
      (c.poll as { interval: number }).interval = 1;
    }).toThrow(TypeError);
    expect(() => (c.models as unknown[]).push({ id: 'b' })).toThrow(TypeError);
  });

  test('a missing file is a ConfigError naming it', async () => {
    const file = path.join(tmp(), 'nope.yaml');
    const err = await loadConfig(file, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toContain(file);
    expect((err as ConfigError).problems).toEqual([`config file ${file} does not exist; pass the path of a YAML config file with --config`]);
  });

  test('YAML anchors and merge keys work', async () => {
    const dir = tmp();
    const file = path.join(dir, 'mls.yaml');
    writeFileSync(
      file,
      `api: { base_url: "https://a.example.com", token: t }
models: [{ id: a }, { id: b }]
x-hook: &hook { type: webhook, url: "https://h.example.com", timeout: 5s }
sinks:
  - { <<: *hook, name: one }
  - { <<: *hook, name: two, timeout: 7s }
`,
    );
    // x-hook is not a known key: anchors must live where the schema allows them
    await expect(loadConfig(file, {})).rejects.toThrow(/x-hook: unknown key/);
    writeFileSync(
      file,
      `api: { base_url: "https://a.example.com", token: t }
models: [{ id: a }, { id: b }]
sinks:
  - &hook { type: webhook, url: "https://h.example.com", timeout: 5s, name: one }
  - { <<: *hook, name: two, timeout: 7s }
`,
    );
    const c = await loadConfig(file, {});
    expect(c.sinks.map((s) => [s.name, s.type === 'webhook' && s.timeout])).toEqual([
      ['one', 5000],
      ['two', 7000],
    ]);
  });
});
