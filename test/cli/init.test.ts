//! `mls init`: a starter config for each sink type that `mls validate --no-env` accepts as
//! written; printed, or written to a new file (an existing one only with --force).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/init.js';
import { loadConfig } from '../../src/cli/config.js';
import { MLS_BIN } from '../e2e/harness.js';
import { runCli } from './run-in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-init-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the built `mls` with no token in its environment. */
function mls(...args: string[]) {
  const env = { ...process.env };
  delete env.MLS_API_TOKEN;
  delete env.MLS_CONFIG;
  return spawnSync(process.execPath, [MLS_BIN, ...args], { env, encoding: 'utf8' });
}

describe('mls init', () => {
  it.each(['file', 'otlp', 'webhook', 'stdout'])('writes a %s starter config that mls validate --no-env accepts', async (sink) => {
    const file = join(dir, `${sink}.yaml`);
    const init = mls('init', '--models', 'model-a,model-b', '--sink', sink, '--output', file);
    expect(init.stderr).toBe(`mls: wrote ${file}; next: mls validate --config ${file}\n`);
    expect(init.status).toBe(0);
    const check = mls('validate', '--no-env', '--config', file);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
    const config = await loadConfig(file, { MLS_API_TOKEN: 'from-env' });
    expect(config.models.map((m) => m.id)).toEqual(['model-a', 'model-b']);
    expect(config.sinks.map((s) => s.type)).toEqual([sink]);
    expect(config.api.token).toBe('from-env');
    expect(config.state.path).toBe('/var/lib/mls/state.db');
  });

  it('prints the config without --output, model ids YAML would misread quoted, and --api-url in place', async () => {
    const r = await runCli(register, ['init', '--models', 'ranker, yes ,a b,0.5', '--sink', 'stdout', '--api-url', 'https://models.example.net/v1'], {});
    expect(r.exitCode).toBe(0);
    const file = join(dir, 'printed.yaml');
    writeFileSync(file, r.stdout);
    const config = await loadConfig(file, {}, { noEnv: true });
    expect(config.models.map((m) => m.id)).toEqual(['ranker', 'yes', 'a b', '0.5']);
    expect(config.api.base_url).toBe('https://models.example.net/v1');
    expect(r.stdout).toMatch(/^# A starter config of mls/);
  });

  it('refuses to overwrite a file unless --force', async () => {
    const file = join(dir, 'existing.yaml');
    writeFileSync(file, 'mine\n');
    const r = await runCli(register, ['init', '--models', 'a', '--sink', 'file', '--output', file], {});
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(`mls: --output: ${file} exists already; choose another path, or add --force to overwrite it\n`);
    expect(readFileSync(file, 'utf8')).toBe('mine\n');
    expect((await runCli(register, ['init', '--models', 'a', '--sink', 'file', '--output', file, '--force'], {})).exitCode).toBe(0);
    expect(readFileSync(file, 'utf8')).toMatch(/type: file/);
  });

  it.each([
    [['--models', 'a', '--sink', 'kafka'], '--sink: expected one of file, otlp, webhook, stdout, got "kafka"'],
    [['--models', 'a,,b', '--sink', 'file'], '--models: expected model ids separated by commas, got "a,,b"'],
    [['--models', 'a,a', '--sink', 'file'], '--models: a model id is listed twice; list each once'],
    [['--models', 'a', '--sink', 'file', '--api-url', 'ftp://x'], '--api-url: expected an http:// or https:// URL, got "ftp://x"'],
  ])('refuses %j', async (args, message) => {
    const r = await runCli(register, ['init', ...args], {});
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(`mls: ${message}\n`);
    expect(r.stdout).toBe('');
  });
});
