//! A sink type is one definition added to the registry: a tiny type registered here, through
//! the registry's own API, is validated by its schema, has its path resolved, its secrets
//! scrubbed, its checks run and its concurrency read, with no list anywhere else to edit.
import path from 'node:path';
import { z } from 'zod';
import { describe, expect, test } from 'vitest';
import { configLoader } from '../../src/cli/config.js';
import { filePath, REQUEST_BATCHES, scalar, secret, secretHeaders, sinkFields, text, type Config } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { scrubSecrets } from '../../src/telemetry/secrets.js';
import type { Sink, SinkContext } from '../../src/sinks/contract.js';
import { defineSink } from '../../src/sinks/definition.js';
import { fileSink } from '../../src/sinks/file/definition.js';
import { BUILTIN_SINKS, sinkRegistry } from '../../src/sinks/registry.js';

const tinySchema = z
  .strictObject({
    type: z.literal('tiny').describe('Appends to one file; exists only in this test.'),
    ...sinkFields(REQUEST_BATCHES),
    dump: filePath('File the tiny sink appends to.'),
    api_key: secret('Key of the tiny receiver.').optional(),
    auth: secretHeaders('Headers sent to the tiny receiver (values are secrets).').prefault({}),
    lanes: scalar(z.number().int().min(1).default(1)).describe('Batches in flight at once.'),
  })
  .describe('Tiny sink.');
type TinyConfig = z.output<typeof tinySchema>;

const built: Array<{ config: TinyConfig; context: SinkContext }> = [];
const tinySink = defineSink<TinyConfig>({
  type: 'tiny',
  schema: tinySchema,
  modelKeys: { tiny_tag: text('Tag the tiny sink puts on the model’s entries.').optional() },
  check: (block) => (block.lanes !== undefined && block.api_key === undefined ? [{ path: ['api_key'], message: 'is required when lanes is set' }] : []),
  validate: (blocks) => blocks.slice(1).map((b) => ({ path: ['sinks', b.index, 'type'], message: 'only one tiny sink may be configured' })),
  concurrency: (config) => config.lanes,
  sendTimeoutMs: (config) => config.lanes * 1_000,
  stepBoundMs: () => 7_000,
  create(config, context): Sink {
    built.push({ config, context });
    return { healthcheck: async () => ({ ok: true }), send: async () => ({ status: 'ok' }), flush: async () => {}, close: async () => {} };
  },
});

const registry = sinkRegistry.with(tinySink);
const loader = configLoader(registry);

const API = { base_url: 'https://api.example.com', token: 'tiny-test-token' };
const KEY = 'tiny-key-5e0c9';
const HEADER = 'Bearer tiny-hdr-31ab7';
const tiny = (over: Record<string, unknown> = {}) => ({ name: 'small', type: 'tiny', dump: 'out/tiny.log', api_key: KEY, auth: { Authorization: HEADER }, lanes: 3, ...over });

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems, (err as ConfigError).message];
  }
  throw new Error('expected a ConfigError');
}

describe('a sink type added through the registry', () => {
  test('is parsed with its defaults, its path resolved against the config folder and its model key', () => {
    const config: Config = loader.parse({ api: API, models: [{ id: 'a', tiny_tag: 'blue' }], sinks: [tiny()] }, { env: {}, baseDir: '/etc/mls' });
    expect(config.sinks[0]).toEqual({
      name: 'small',
      type: 'tiny',
      dump: path.join('/etc/mls', 'out', 'tiny.log'),
      api_key: KEY,
      auth: { Authorization: HEADER },
      lanes: 3,
      batch: { max_entries: 1000, max_bytes: 1024 * 1024, max_delay: 1000 },
      retry: { base_delay: 500, max_delay: 60_000 },
      raw: false,
    });
    expect(config.models[0]).toEqual({ id: 'a', tiny_tag: 'blue', resource: {} });
  });

  test('has its secret fields scrubbed from problems and from the logs, though it never registers them itself', () => {
    // values no other test of this file loads
    const [key, header] = ['tiny-key-only-here-81f2', 'Bearer tiny-hdr-only-here-0c4d'];
    const said = `key ${key}, header ${header}`;
    expect(scrubSecrets(said)).toBe(said);
    const config = loader.parse({ api: API, models: [{ id: 'a' }], sinks: [tiny({ api_key: key, auth: { Authorization: header } })] }, { env: {} });
    expect(loader.secrets(config)).toEqual(['tiny-test-token', key, header]);
    expect(scrubSecrets(said)).toBe('key [REDACTED], header [REDACTED]');
    // both secrets come back in the problems of other fields, and are cut out of them
    const problems = problemsOf(() => loader.parse({ api: API, models: [{ id: KEY }, { id: HEADER }], sinks: [tiny({ lanes: KEY })] }, { env: {} }));
    expect(problems).toContain('sinks[0].lanes: expected a number, got "[REDACTED]"');
    for (const p of problems) {
      expect(p).not.toContain('tiny-key');
      expect(p).not.toContain('tiny-hdr');
    }
  });

  test('has the password of a secret URL scrubbed alone and as user:password, the forms a proxy echoes', () => {
    const password = 'pw-Proxy-77e1d';
    const config = loader.parse({ api: API, models: [{ id: 'a' }], sinks: [tiny({ api_key: `http://relay:${encodeURIComponent(password + '@')}@proxy.example.com:3128` })] }, { env: {} });
    expect(loader.secrets(config)).toContain(`relay:${password}@`);
    const echoed = `proxy said: bad password ${password}@ in ${Buffer.from(`relay:${password}@`).toString('base64')}`;
    expect(scrubSecrets(echoed)).not.toMatch(/pw-Proxy|cmVsYXk6cHctUHJveHkt/);
  });

  test('is refused where its schema refuses it, with the path and the fix', () => {
    expect(problemsOf(() => loader.parse({ api: API, models: [{ id: 'a' }], sinks: [tiny({ dumpp: 'x' })] }, { env: {} }))).toContain(
      'sinks[0].dumpp: unknown key; did you mean dump? allowed keys: type, name, batch, retry, models, raw, drop, min_level, dump, api_key, auth, lanes',
    );
    expect(problemsOf(() => loader.parse({ api: API, models: [{ id: 'a' }], sinks: [tiny({ dump: ' ' })] }, { env: {} }))).toContain(
      'sinks[0].dump: expected a non-empty string',
    );
  });

  test('has its own checks run: of one block as written, and of its blocks together', () => {
    const raw = { api: API, models: [{ id: 'a' }], sinks: [tiny({ api_key: undefined }), tiny({ name: 'other' })] };
    const problems = problemsOf(() => loader.parse(raw, { env: {} }));
    expect(problems).toContain('sinks[0].api_key: is required when lanes is set');
    expect(loader.parse({ ...raw, sinks: [tiny()] }, { env: {} }).sinks).toHaveLength(1);
    expect(problemsOf(() => loader.parse({ ...raw, sinks: [tiny(), { name: 'hook', type: 'webhook', url: 'https://h.example.com' }, tiny({ name: 'other' })] }, { env: {} }))).toContain(
      'sinks[2].type: only one tiny sink may be configured',
    );
  });

  test('gives its delivery concurrency and is built by the registry', async () => {
    const config = loader.parse({ api: API, models: [{ id: 'a' }], sinks: [tiny()] }, { env: {} });
    const sc = config.sinks[0]!;
    expect(registry.deliveryConcurrency(sc)).toBe(3);
    // Its bounds come from its definition too, not from a list of types in the daemon.
    expect(registry.sendTimeoutMs(sc)).toBe(3_000);
    expect(registry.stepBoundMs(sc)).toBe(7_000);
    const context: SinkContext = { name: 'small', state: undefined, now: Date.now, logger: { debug() {}, info() {}, warn() {}, error() {} } };
    const sink = await registry.build(sc, context);
    expect(await sink.healthcheck()).toEqual({ ok: true });
    expect(built.at(-1)).toEqual({ config: sc, context });
  });

  test('is in the JSON Schema of the loader that has it, with its description and its model key', () => {
    const schema = JSON.stringify(loader.jsonSchema());
    expect(schema).toContain('Appends to one file; exists only in this test.');
    expect(schema).toContain('Tag the tiny sink puts on the model’s entries.');
  });

  test('is unknown to the built-in registry, which names its types', () => {
    const problems = problemsOf(() => configLoader().parse({ api: API, models: [{ id: 'a' }], sinks: [tiny()] }, { env: {} }));
    expect(problems).toContain(`sinks[0].type: "tiny" is not a known type; use one of ${BUILTIN_SINKS.map((d) => d.type).join(', ')}`);
  });
});

describe('the registry', () => {
  test('refuses two types of one name', () => {
    expect(() => sinkRegistry.with(fileSink)).toThrow(/two sink types are named file/);
  });

  test('gives each built-in sink its delivery concurrency: the webhook its own, the others one', () => {
    const config = configLoader().parse(
      {
        api: API,
        models: [{ id: 'a' }],
        sinks: [
          { name: 'hook', type: 'webhook', url: 'https://h.example.com', concurrency: 4 },
          { name: 'hook1', type: 'webhook', url: 'https://h.example.com' },
          { name: 'f', type: 'file', path: '/out/{model_id}.ndjson' },
          { name: 'o', type: 'otlp' },
          { name: 's', type: 'stdout' },
          { name: 'm', type: 'module', path: '/opt/sink.js' },
        ],
      },
      { env: {} },
    );
    expect(config.sinks.map((sc) => [sc.name, sinkRegistry.deliveryConcurrency(sc)])).toEqual([
      ['hook', 4],
      ['hook1', 1],
      ['f', 1],
      ['o', 1],
      ['s', 1],
      ['m', 1],
    ]);
    // Only module sinks get a send timeout from the loop (the others time their own requests);
    // a reload or shutdown waits on each at most its timeout, 30 s for file and stdout.
    expect(config.sinks.map((sc) => [sc.name, sinkRegistry.sendTimeoutMs(sc), sinkRegistry.stepBoundMs(sc)])).toEqual([
      ['hook', undefined, 30_000],
      ['hook1', undefined, 30_000],
      ['f', undefined, 30_000],
      ['o', undefined, 10_000],
      ['s', undefined, 30_000],
      ['m', 30_000, 30_000],
    ]);
  });
});
