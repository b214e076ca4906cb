//! `models_file:`: models listed in a file of their own (YAML or one id per line), joined to
//! the inline `models`, with every problem in the file named by file and line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { configJsonSchema, loadConfig, parseConfig } from '../../src/cli/config.js';
import { modelsFileFormat } from '../../src/config/models-file.js';
import { ConfigError, ExitCode } from '../../src/errors.js';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder holding `files` (name → content), removed after the file's tests. */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mls-models-file-'));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/** A config file in `dir` with `over` on top of a minimal config, and its path. */
function configFile(dir: string, over: Record<string, unknown>): string {
  const file = path.join(dir, 'mls.yaml');
  const config = { api: { base_url: 'https://api.example.com', token: 'test-token' }, sinks: [{ name: 'console', type: 'stdout' }], ...over };
  writeFileSync(file, stringify(config));
  return file;
}

/** The models of a config that lists `entries` inline: what the file's models must equal. */
function inline(entries: unknown[]): unknown[] {
  return parseConfig({ api: { base_url: 'https://api.example.com', token: 't' }, models: entries, sinks: [{ name: 'c', type: 'stdout' }] }, { env: {} }).models;
}

async function problemsOf(file: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const err = await loadConfig(file, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).exitCode).toBe(ExitCode.config);
  return [...(err as ConfigError).problems];
}

describe('plain text', () => {
  test('one id per line; blank lines and comments are skipped; the models join the inline ones after them', async () => {
    const dir = folder({ 'models.txt': '\uFEFF# models of team a\nmodel-b\r\n\n  model-c   # the big one\nmodel-d#1\n\n' });
    const config = await loadConfig(configFile(dir, { models: [{ id: 'model-a', is_less_logs: true }], models_file: 'models.txt' }));
    expect(config.models.map((m) => m.id)).toEqual(['model-a', 'model-b', 'model-c', 'model-d#1']);
    expect(config.models).toEqual(inline([{ id: 'model-a', is_less_logs: true }, { id: 'model-b' }, { id: 'model-c' }, { id: 'model-d#1' }]));
    // The path is resolved against the config file's folder, like every path of the config.
    expect(config.models_file).toBe(path.join(dir, 'models.txt'));
  });

  test('a file alone, without inline models, is enough', async () => {
    const dir = folder({ 'ids.txt': 'm1\nm2\n' });
    const config = await loadConfig(configFile(dir, { models_file: './ids.txt' }));
    expect(config.models.map((m) => m.id)).toEqual(['m1', 'm2']);
  });

  test('ten thousand ids load, each one model', async () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `model-${i}`);
    const dir = folder({ 'many.txt': `${ids.join('\n')}\n` });
    const config = await loadConfig(configFile(dir, { models_file: 'many.txt' }));
    expect(config.models).toHaveLength(10_000);
    expect(config.models.at(-1)).toEqual(inline([{ id: 'model-9999' }])[0]);
  });

  test('a line with two words is an error naming the file, the line and the fix', async () => {
    const dir = folder({ 'models.txt': 'm1\n\nm2 m3\n' });
    const problems = await problemsOf(configFile(dir, { models_file: 'models.txt' }));
    expect(problems).toEqual([
      `models_file: ${path.join(dir, 'models.txt')}, line 3: "m2 m3" is not one model id; write one id per line (settings per model need a YAML file: *.yaml, a list of entries like those of models)`,
    ]);
  });
});

describe('YAML', () => {
  test('entries like those of models, or plain ids, parsed as inline models are', async () => {
    const dir = folder({
      'models.yaml': ['# settings per model', '- model-b', '- id: model-c', '  start_at: -2h', '  is_less_logs: true', '- id: ${TEAM}-model', ''].join('\n'),
    });
    const file = configFile(dir, { models: [{ id: 'model-a', start_at: '-2h' }], models_file: 'models.yaml' });
    const config = await loadConfig(file, { TEAM: 'blue' });
    expect(config.models).toEqual(
      inline([{ id: 'model-a', start_at: '-2h' }, { id: 'model-b' }, { id: 'model-c', start_at: '-2h', is_less_logs: true }, { id: 'blue-model' }]),
    );
  });

  test('a JSON list is YAML', async () => {
    const dir = folder({ 'models.json': JSON.stringify(['m1', { id: 'm2', is_less_logs: false }]) });
    const config = await loadConfig(configFile(dir, { models_file: 'models.json' }));
    expect(config.models).toEqual(inline([{ id: 'm1' }, { id: 'm2', is_less_logs: false }]));
  });

  test('problems inside entries name the file and the line of the value', async () => {
    const text = ['- ok-1', '- id: bad-start', '  is_less_logs: true', '  start_at: -1x', '- 12345', '- id: typo', '  is_les_logs: true', '-', '- id: ${UNSET}', ''].join('\n');
    const dir = folder({ 'models.yaml': text });
    const f = path.join(dir, 'models.yaml');
    const problems = await problemsOf(configFile(dir, { models_file: 'models.yaml' }));
    expect(problems).toEqual([
      `models_file: ${f}, line 4: start_at: "-1x" is not a duration back from now; use now, a duration back from now such as -1h, or an ISO timestamp such as 2026-01-01T00:00:00Z`,
      `models_file: ${f}, line 5: 12345 is not a model id; quote it ("12345") so that YAML reads it as text`,
      expect.stringMatching(new RegExp(`^models_file: ${f}, line 7: is_les_logs: unknown key; did you mean is_less_logs\\?`)),
      `models_file: ${f}, line 8: expected a model id or an entry like those of models (id: ...), got nothing (null)`,
      `models_file: ${f}, line 9: id: environment variable UNSET is not set; set it, or write \${UNSET:-default}`,
    ]);
  });

  test('a syntax error names its line', async () => {
    const dir = folder({ 'models.yaml': '- m1\n- id: m2\n  start_at: [unclosed\n' });
    const problems = await problemsOf(configFile(dir, { models_file: 'models.yaml' }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^models_file: ${path.join(dir, 'models.yaml')}, line [34]: .*; fix the YAML syntax$`));
  });

  test('a mapping with models: says to write the list at the top level', async () => {
    const dir = folder({ 'models.yaml': 'models:\n  - m1\n' });
    const problems = await problemsOf(configFile(dir, { models_file: 'models.yaml' }));
    expect(problems).toEqual([
      `models_file: ${path.join(dir, 'models.yaml')}, line 1: expected a list of models, got a mapping; write the entries at the top level of the file, without \`models:\``,
    ]);
  });
});

describe('format', () => {
  test('is told by the extension, else by the first line that is not blank or a comment', () => {
    expect(modelsFileFormat('a.yaml', 'm1')).toBe('yaml');
    expect(modelsFileFormat('a.YML', 'm1')).toBe('yaml');
    expect(modelsFileFormat('a.json', '[]')).toBe('yaml');
    expect(modelsFileFormat('a.txt', '- m1')).toBe('text');
    expect(modelsFileFormat('models', '# list\n\n- m1\n')).toBe('yaml');
    expect(modelsFileFormat('models.list', '["m1"]')).toBe('yaml');
    expect(modelsFileFormat('models', '# list\nm1\n- m2\n')).toBe('text');
    expect(modelsFileFormat('models', '')).toBe('text');
  });

  test('a file of another name that starts with - is read as YAML', async () => {
    const dir = folder({ models: '# YAML after all\n- id: m1\n  is_less_logs: true\n' });
    const config = await loadConfig(configFile(dir, { models_file: 'models' }));
    expect(config.models).toEqual(inline([{ id: 'm1', is_less_logs: true }]));
  });
});

describe('joining and duplicates', () => {
  test('an id both inline and in the file is an error naming both places', async () => {
    const dir = folder({ 'models.txt': 'm2\nm1\n' });
    const problems = await problemsOf(configFile(dir, { models: [{ id: 'm0' }, { id: 'm1' }], models_file: 'models.txt' }));
    expect(problems).toEqual([
      `models_file: ${path.join(dir, 'models.txt')}, line 2: model "m1" is already listed in models[1] of the config file; list each model once: remove one of the two`,
    ]);
  });

  test('an id twice in the file names both lines', async () => {
    const dir = folder({ 'models.yaml': '- m1\n- m2\n- id: m1\n' });
    const problems = await problemsOf(configFile(dir, { models_file: 'models.yaml' }));
    expect(problems).toEqual([
      `models_file: ${path.join(dir, 'models.yaml')}, line 3: model "m1" is already listed on line 1 of models.yaml; list each model once: remove one of the two`,
    ]);
  });

  test('sinks may name the models of the file', async () => {
    const dir = folder({ 'models.txt': 'm1\nm2\n' });
    const config = await loadConfig(configFile(dir, { models_file: 'models.txt', sinks: [{ name: 'console', type: 'stdout', models: ['m2'] }] }));
    expect(config.sinks[0]).toMatchObject({ models: ['m2'] });
  });

  test('with thousands of models, a sink naming an unknown one lists a few of them', async () => {
    const dir = folder({ 'models.txt': Array.from({ length: 2_000 }, (_, i) => `m${i}`).join('\n') });
    const problems = await problemsOf(configFile(dir, { models_file: 'models.txt', sinks: [{ name: 'console', type: 'stdout', models: ['nope'] }] }));
    expect(problems).toEqual(['sinks[0].models[0]: "nope" is not a configured model id; use one of m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, ... (2000 in all)']);
  });
});

describe('errors', () => {
  test('a missing file names the path it was looked for at', async () => {
    const dir = folder({});
    const problems = await problemsOf(configFile(dir, { models: [{ id: 'm1' }], models_file: 'lists/models.txt' }));
    expect(problems).toEqual([
      `models_file: ${path.join(dir, 'lists/models.txt')}: does not exist; create it or correct models_file (a relative path is resolved against the config file's folder)`,
    ]);
  });

  test('an empty file and no inline models is an error; with inline models it is not', async () => {
    const dir = folder({ 'models.txt': '# nothing yet\n' });
    expect(await problemsOf(configFile(dir, { models_file: 'models.txt' }))).toEqual([
      `models_file: ${path.join(dir, 'models.txt')}: lists no model, and models lists none either; add at least one model id`,
    ]);
    const config = await loadConfig(configFile(dir, { models: [{ id: 'm1' }], models_file: 'models.txt' }));
    expect(config.models).toEqual(inline([{ id: 'm1' }]));
  });

  test('neither models nor models_file is an error saying both ways', () => {
    expect(() => parseConfig({ api: { base_url: 'https://api.example.com', token: 't' }, sinks: [{ name: 'c', type: 'stdout' }] }, { env: {} })).toThrow(
      'models: is required; list the models here, or in a file named by models_file',
    );
  });

  test('a file in the wrong format lists its first 20 problems and counts the rest', async () => {
    const dir = folder({ 'models.txt': Array.from({ length: 100 }, (_, i) => `model ${i}`).join('\n') });
    const problems = await problemsOf(configFile(dir, { models: [{ id: 'm1' }], models_file: 'models.txt' }));
    expect(problems).toHaveLength(21);
    expect(problems[19]).toContain('line 20: "model 19"');
    expect(problems[20]).toBe(`models_file: ${path.join(dir, 'models.txt')}: 80 more problems not listed; fix the ones above and run mls validate again`);
  });

  test('problems elsewhere in the config are listed as well', async () => {
    const dir = folder({ 'models.txt': 'm1\nm1\n' });
    const problems = await problemsOf(configFile(dir, { models_file: 'models.txt', poll: { interval: 'soon' } }));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^poll\.interval: /);
    expect(problems[1]).toContain('line 2: model "m1" is already listed on line 1');
  });
});

test('the JSON Schema takes models, models_file or both', () => {
  const schema = configJsonSchema() as { required: string[]; anyOf: unknown[]; properties: Record<string, { type?: string; description: string }> };
  expect(schema.required).not.toContain('models');
  expect(schema.anyOf).toEqual([{ required: ['models'] }, { required: ['models_file'] }]);
  expect(schema.properties.models_file!.type).toBe('string');
});
