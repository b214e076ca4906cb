//! Loading the config file: interpolation, secrets kept out of problems, token resolution, paths, freezing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { loadConfig, parseConfig } from '../../src/cli/config.js';
import { scrubSecrets } from '../../src/telemetry/secrets.js';
import { ConfigError } from '../../src/errors.js';
import { minimal, problemsOf, removeTmpAfterAll, tmp } from './config-fixture.js';

removeTmpAfterAll();

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

  test('the secrets of a loaded config are cut out of every log line from then on', () => {
    // values no other test of this file loads
    const raw = { ...minimal(), api: { base_url: 'https://api.example.com', token: 'tok-only-here' }, sinks: [{ name: 'w', type: 'webhook', url: 'https://h.example.com', signing_secret: 'sign-only-here', headers: { 'X-Key': 'hdr-only-here' } }] };
    const text = 'token tok-only-here, signing secret sign-only-here, header hdr-only-here';
    expect(scrubSecrets(text)).toBe(text);
    parseConfig(raw, { env: {} });
    expect(scrubSecrets(text)).toBe('token [REDACTED], signing secret [REDACTED], header [REDACTED]');
  });

  test('a proxy URL is secret, and proxy none is no secret (it would cut the word out of every log line)', () => {
    const withProxies = {
      ...minimal(),
      api: { ...minimal().api, proxy: 'http://mls:proxy-pw-4d@proxy.example:3128' },
      sinks: [{ name: 'w', type: 'webhook', url: 'https://h.example.com', proxy: 'none' }],
    };
    const config = parseConfig(withProxies, { env: {} });
    expect(config.api.proxy).toBe('http://mls:proxy-pw-4d@proxy.example:3128/');
    expect((config.sinks[0] as { proxy?: unknown }).proxy).toBe(false);
    expect(scrubSecrets('proxy password proxy-pw-4d, proxy none')).toBe('proxy password [REDACTED], proxy none');
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

  test('a token file that is a FIFO, a device or over 64 KiB is a problem; nothing hangs and nothing is read whole', { timeout: 10_000 }, () => {
    const dir = tmp();
    execFileSync('mkfifo', [path.join(dir, 'fifo')]); // no writer: reading it would wait for ever
    writeFileSync(path.join(dir, 'big'), 'x'.repeat(64 * 1024 + 1));
    writeFileSync(path.join(dir, 'just-fits'), `${'y'.repeat(64 * 1024 - 1)}\n`);
    const load = (file: string) => parseConfig({ ...minimal(), api: { base_url: 'https://api.example.com', token_file: file } }, { env: {}, baseDir: dir });
    expect(problemsOf(() => load('fifo'))).toEqual([`api.token_file: ${path.join(dir, 'fifo')} is not a regular file (a FIFO, a device or a folder); write the token into a file`]);
    expect(problemsOf(() => load('/dev/zero'))).toEqual(['api.token_file: /dev/zero is not a regular file (a FIFO, a device or a folder); write the token into a file']);
    expect(problemsOf(() => load('big'))).toEqual([`api.token_file: ${path.join(dir, 'big')} is larger than 64 KiB; it must hold only the token`]);
    expect(load('just-fits').api.token).toHaveLength(64 * 1024 - 1);
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
