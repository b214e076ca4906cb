//! `mls validate`: summary and exit 0 for a valid config, one line per problem and exit 78 otherwise.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { register } from '../../src/cli/validate.js';
import { parseYaml } from '../../src/config/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';

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

async function validate(file: string, ...flags: string[]): Promise<typeof process.exitCode> {
  const program = new Command();
  register(program);
  await program.parseAsync(['validate', '--config', file, ...flags], { from: 'user' });
  return process.exitCode;
}

const tmp = mkdtempSync(path.join(tmpdir(), 'mls-validate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

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

describe('mls validate --no-env', () => {
  /** Files that fail only for want of their environment. */
  const ENVIRONMENT_ONLY = ['no-token.yaml', 'token-file-missing.yaml', 'unset-env-var.yaml'];

  test.each(readdirSync(examplesDir).filter((f) => f.endsWith('.yaml')).sort())('config/examples/%s passes without its environment', async (name) => {
    expect(await validate(path.join(examplesDir, name), '--no-env')).toBe(0);
    expect(stderr).toEqual([]);
    expect(stdout.join('')).toMatch(/^config OK: .*\nchecked without the environment; /);
  });

  test("the config of deploy/kubernetes/configmap.yaml passes without its environment, as mounted", async () => {
    const map = parseYaml(readFileSync(fileURLToPath(new URL('../../deploy/kubernetes/configmap.yaml', import.meta.url)), 'utf8')) as { data: Record<string, string> };
    const folder = path.join(tmp, 'etc-mls');
    mkdirSync(folder);
    for (const [key, text] of Object.entries(map.data)) writeFileSync(path.join(folder, key), text);
    expect(await validate(path.join(folder, 'config.yaml'), '--no-env')).toBe(0);
    expect(stdout.join('')).toBe('config OK: 3 models, 1 sink (otel)\nchecked without the environment; these stood for any value: the API token (it comes from outside the file)\n');
  });

  test.each(readdirSync(badDir).filter((f) => f.endsWith('.yaml') && !ENVIRONMENT_ONLY.includes(f)).sort())('%s still exits 78 with its problem', async (name) => {
    expect(await validate(path.join(badDir, name), '--no-env')).toBe(78);
    expect(stderr.join('').trimEnd().split('\n')).toHaveLength(1);
  });

  test.each(ENVIRONMENT_ONLY)('%s, wrong only for want of its environment, passes', async (name) => {
    expect(await validate(path.join(badDir, name), '--no-env')).toBe(0);
  });

  test('names the variables that stood in, and reads none of them', async () => {
    process.env.HOOK_KEY = 'set but ignored';
    expect(await validate(path.join(examplesDir, 'webhook.yaml'), '--no-env')).toBe(0);
    expect(stdout.join('')).toContain('these stood for any value: unset variables ${MLS_API_TOKEN}, ${HOOK_KEY}, ${HOOK_SECRET}\n');
  });

  test('cannot be combined with --check-service, which needs the token', async () => {
    await expect(validate(path.join(examplesDir, 'stdout.yaml'), '--no-env', '--check-service')).rejects.toThrow(/--check-service needs the token/);
  });
});

describe('mls validate --check-service', () => {
  const TOKEN = 'service-token';
  let sim: Simulator;

  /** A config of the simulator's models and `more`, with requests that give up within a second. */
  function config(models: string[], token = TOKEN): string {
    const file = path.join(tmp, `service-${models.join('-')}-${token}.yaml`);
    writeFileSync(
      file,
      `api:\n  base_url: ${sim.url}\n  token: ${token}\n  timeouts: { connect: 1s, headers: 300ms, body: 300ms }\n  retry: { deadline: 1s, base_delay: 50ms, max_delay: 100ms }\n` +
        `models: [${models.map((m) => `{ id: ${m} }`).join(', ')}]\nsinks: [{ name: out, type: stdout }]\n`,
    );
    return file;
  }

  afterEach(async () => sim?.close());

  test('a model the service knows answers 200, with nothing in the last second, and the check passes', async () => {
    sim = await startSimulator({ token: TOKEN, models: ['a', 'b'], ratePerSec: 0 });
    expect(await validate(config(['a', 'b']), '--check-service')).toBe(0);
    expect(stdout.join('')).toContain('model a: ok (HTTP 200), 0 entries in the last second\nmodel b: ok (HTTP 200), 0 entries in the last second\nservice: every model answered (2)\n');
    // One request per model, asking for fewer logs.
    expect(sim.stats()).toMatchObject({ logsRequests: 2, lessLogsRequests: 2 });
  });

  test('a model the service does not know (404) is named, and the exit is 4', async () => {
    sim = await startSimulator({ token: TOKEN, models: ['a'], ratePerSec: 0 });
    expect(await validate(config(['a', 'typo']), '--check-service')).toBe(4);
    const out = stdout.join('');
    expect(out).toContain('model a: ok');
    expect(out).toContain('model typo: UNKNOWN MODEL (HTTP 404), the service does not know this model: Model not found\n');
    expect(out).toContain('service: 1 of 2 models answered; unknown model: typo\n');
  });

  test('a model refused with 400 and details is named with the details, and the exit is 4', async () => {
    sim = await startSimulator({ token: TOKEN, models: ['a'], ratePerSec: 0, unknownModelStatus: 400 });
    expect(await validate(config(['a', 'typo']), '--check-service')).toBe(4);
    expect(stdout.join('')).toContain('model typo: REFUSED (HTTP 400), the service refused a well-formed request for this model: Model typo does not exist in this workspace;');
  });

  test('every model answering 404 points at api.base_url too', async () => {
    sim = await startSimulator({ token: TOKEN, models: ['a'], ratePerSec: 0 });
    expect(await validate(config(['x', 'y']), '--check-service')).toBe(4);
    expect(stdout.join('')).toContain('every model answered 404: if the ids are right, check api.base_url (its path prefix)\n');
  });

  test.each([401, 403] as const)('a token refused with %i names the models, exits 3, and never shows the token', async (status) => {
    sim = await startSimulator({ token: TOKEN, models: ['a', 'b'], ratePerSec: 0 });
    sim.denyModels(['b'], status);
    expect(await validate(config(['a', 'b']), '--check-service')).toBe(3);
    const out = stdout.join('');
    expect(out).toContain(`model b: TOKEN REFUSED (HTTP ${status}), the service refused the API token for this model\n`);
    expect(out).toContain('service: 1 of 2 models answered; token refused: b\n');
    expect(out + stderr.join('')).not.toContain(TOKEN);
  });

  test('a wrong token is refused for every model', async () => {
    sim = await startSimulator({ token: TOKEN, models: ['a'], ratePerSec: 0 });
    expect(await validate(config(['a'], 'not-the-token'), '--check-service')).toBe(3);
    expect(stdout.join('')).toContain('model a: TOKEN REFUSED (HTTP 401)');
  });

  test('a service failing with 5xx past the deadline is no answer, and the exit is 4', async () => {
    sim = await startSimulator({ token: TOKEN, models: ['a'], ratePerSec: 0, faults: { error500: 1 } });
    expect(await validate(config(['a']), '--check-service')).toBe(4);
    expect(stdout.join('')).toMatch(/model a: NO ANSWER \(HTTP 500\), .*\nservice: 0 of 1 models answered; no answer: a\n/);
  });

  test('a service that does not answer in time is no answer, and the exit is 4', async () => {
    sim = await startSimulator({ token: TOKEN, models: ['a'], ratePerSec: 0, faults: { slow: 1, slowMs: 5_000 } });
    expect(await validate(config(['a']), '--check-service')).toBe(4);
    expect(stdout.join('')).toMatch(/model a: NO ANSWER, .*\n/);
  });
});
