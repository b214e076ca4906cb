//! The example configs validate, and the example custom sink module works.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, onTestFinished, test } from 'vitest';
import { loadConfig } from '../../src/cli/config.js';
import type { Sink, SinkContext, SinkFactory } from '../../src/sinks/contract.js';
import { BUILTIN_SINKS } from '../../src/sinks/registry.js';

const examplesDir = fileURLToPath(new URL('../../config/examples/', import.meta.url));
const examples = readdirSync(examplesDir).filter((f) => f.endsWith('.yaml')).sort();
// Values for every ${VAR} the examples use.
const env = { MLS_API_TOKEN: 'example-token', HOOK_KEY: 'example-hook-key', HOOK_SECRET: 'example-hook-secret' };

describe('example configs', () => {
  test('the documented examples exist', () => {
    expect(examples).toEqual(
      expect.arrayContaining(['custom-module.yaml', 'file-archive.yaml', 'loki-otlp.yaml', 'many-models.yaml', 'otlp-collector.yaml', 'stdout.yaml', 'webhook.yaml']),
    );
  });

  test.each(examples)('%s is valid', async (file) => {
    const config = await loadConfig(path.join(examplesDir, file), env);
    expect(config.models.length).toBeGreaterThan(0);
    expect(config.sinks.length).toBeGreaterThan(0);
  });

  test('every built-in sink type (src/sinks/registry.ts) has an example', async () => {
    const shown = new Set<string>();
    for (const file of examples) for (const sink of (await loadConfig(path.join(examplesDir, file), env)).sinks) shown.add(sink.type);
    expect(BUILTIN_SINKS.map((d) => d.type).filter((type) => !shown.has(type))).toEqual([]);
  });

  test('every ${VAR} used by an example is either set by this test or has a default', () => {
    for (const file of examples) {
      const text = readFileSync(path.join(examplesDir, file), 'utf8');
      for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-)?/g)) {
        expect(m[2] !== undefined || m[1]! in env, `${file} uses \${${m[1]}}`).toBe(true);
      }
    }
  });

  test('many-models.yaml polls the models of its models file after the inline one', async () => {
    const config = await loadConfig(path.join(examplesDir, 'many-models.yaml'), env);
    expect(config.models_file).toBe(path.join(examplesDir, 'many-models.txt'));
    expect(config.models.map((m) => m.id)).toEqual(['model-with-quiet-logs', 'model-0001', 'model-0002', 'model-0003', 'model-0004', 'model-0005']);
  });

  test('loki-otlp.yaml points at the native OTLP endpoint of Loki over http/protobuf', async () => {
    const config = await loadConfig(path.join(examplesDir, 'loki-otlp.yaml'), env);
    expect(config.sinks[0]).toMatchObject({ type: 'otlp', endpoint: 'http://loki:3100/otlp', protocol: 'http/protobuf' });
  });
});

describe('custom-sink.example.js', () => {
  const context = (): SinkContext => ({
    name: 'custom',
    state: undefined,
    now: () => Date.now(),
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  const entry = (seq: number) => ({ seq, modelId: 'model-a', time: '2026-01-01T00:00:00.123456789Z', timeNs: 1n, stream: 'stdout', log: `line ${seq}`, fetchedAtMs: 0 });

  test('is the module custom-module.yaml loads', async () => {
    const config = await loadConfig(path.join(examplesDir, 'custom-module.yaml'), env);
    expect(config.sinks[0]).toMatchObject({ type: 'module', path: path.join(examplesDir, 'custom-sink.example.js') });
  });

  test('appends NDJSON to options.path, acknowledges with ok, and closes idempotently', async () => {
    const mod = (await import(pathToFileURL(path.join(examplesDir, 'custom-sink.example.js')).href)) as { default: SinkFactory };
    const dir = mkdtempSync(path.join(tmpdir(), 'mls-custom-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const out = path.join(dir, 'out.ndjson');
    const sink: Sink = await mod.default({ path: out }, context());
    expect(await sink.healthcheck()).toEqual({ ok: true });
    const signal = new AbortController().signal;
    expect(await sink.send({ id: 'custom:1-2', firstSeq: 1, lastSeq: 2, entries: [entry(1), entry(2)] }, signal)).toEqual({ status: 'ok' });
    expect(await sink.send({ id: 'custom:3-3', firstSeq: 3, lastSeq: 3, entries: [entry(3)] }, signal)).toEqual({ status: 'ok' });
    await sink.flush();
    const first = sink.close();
    expect(sink.close()).toBe(first);
    await first;
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { seq: number; log: string; model_id: string });
    expect(lines.map((l) => [l.seq, l.model_id, l.log])).toEqual([
      [1, 'model-a', 'line 1'],
      [2, 'model-a', 'line 2'],
      [3, 'model-a', 'line 3'],
    ]);
  });

  test('refuses to start without options.path', async () => {
    const mod = (await import(pathToFileURL(path.join(examplesDir, 'custom-sink.example.js')).href)) as { default: SinkFactory };
    await expect(mod.default({}, context())).rejects.toThrow(/options\.path/);
  });
});
