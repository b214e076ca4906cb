//! `mls validate`: summary and exit 0 for a valid config, one line per problem and exit 78 otherwise.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { register } from '../../src/cli/validate.js';

const examplesDir = fileURLToPath(new URL('../../config/examples/', import.meta.url));
const badDir = fileURLToPath(new URL('../fixtures/config/bad/', import.meta.url));

let stdout: string[];
let stderr: string[];
const ENV_KEYS = ['MLS_API_TOKEN', 'CREDENTIALS_DIRECTORY', 'MLS_CONFIG', 'HOOK_KEY', 'HOOK_SECRET'] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

beforeEach(() => {
  stdout = [];
  stderr = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
  for (const k of ENV_KEYS) delete process.env[k];
  process.exitCode = undefined;
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
  process.exitCode = undefined;
});

async function validate(file: string): Promise<typeof process.exitCode> {
  const program = new Command();
  register(program);
  await program.parseAsync(['validate', '--config', file], { from: 'user' });
  return process.exitCode;
}

describe('mls validate', () => {
  test('prints a summary and exits 0 for a valid config', async () => {
    process.env.MLS_API_TOKEN = 'example-token';
    process.env.HOOK_KEY = 'k';
    process.env.HOOK_SECRET = 's3cret';
    const code = await validate(path.join(examplesDir, 'webhook.yaml'));
    expect(code).toBe(0);
    expect(stdout.join('')).toBe('config OK: 2 models, 1 sink (hook)\n');
    expect(stderr).toEqual([]);
  });

  test('lists sink names', async () => {
    process.env.MLS_API_TOKEN = 'example-token';
    const code = await validate(path.join(examplesDir, 'stdout.yaml'));
    expect(code).toBe(0);
    expect(stdout.join('')).toBe('config OK: 1 model, 1 sink (console)\n');
  });

  test('prints every problem on its own line, prefixed with the file name, and exits 78', async () => {
    const file = path.join(badDir, 'duplicate-model-id.yaml');
    const code = await validate(file);
    expect(code).toBe(78);
    expect(stdout).toEqual([]);
    expect(stderr.join('')).toBe(`${file}: models[1].id: "model-a" is already the id of models[0]; model ids must be unique\n`);
  });

  test('a missing file exits 78 and names the file', async () => {
    const file = path.join(badDir, 'no-such-file.yaml');
    expect(await validate(file)).toBe(78);
    expect(stderr.join('')).toContain(`config file ${file} does not exist`);
  });

  test.each(readdirSync(badDir).filter((f) => f.endsWith('.yaml')).sort())('%s exits 78 with one problem', async (name) => {
    const code = await validate(path.join(badDir, name));
    expect(code).toBe(78);
    const lines = stderr.join('').trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(`${path.join(badDir, name)}: `)).toBe(true);
  });
});
