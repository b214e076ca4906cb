//! One way to name the config: `-c/--config FILE`, else `MLS_CONFIG`, for every command that
//! reads it; `mls logs` and `mls settings update` take the service, the token and (for
//! `logs --process`) the processing rules from it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { register as registerLogs } from '../../src/cli/logs.js';
import { register as registerSettings } from '../../src/cli/settings.js';
import { buildProgram } from '../../src/cli/program.js';
import { logsPage, sendJson, startServer, type TestServer } from '../api/helpers.js';
import { MLS_BIN } from '../e2e/harness.js';
import { runCli } from './run-in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-config-option-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every command that reads the config, as typed (the options besides the config it needs). */
const READERS = [
  ['run'],
  ['status'],
  ['validate'],
  ['state', 'check'],
  ['dlq', 'list'],
  ['dlq', 'replay'],
  ['dlq', 'purge'],
  ['settings', 'plan'],
  ['settings', 'apply'],
  ['settings', 'history'],
  ['settings', 'update', '--model', 'm', '--min-replica', '1'],
  ['logs', '--model', 'm'],
  ['top', '--once'],
  ['tap'],
];

describe('naming the config', () => {
  // A config with one problem: each command that reads it stops there, naming the file.
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'api:\n  base_url: https://api.example.com\n  token: t\nmodels: [{ id: m }]\nsinks: [{ name: out, type: stdout }]\npoll: { intervall: 5s }\n');

  it.each(READERS.map((args) => [args.join(' '), args] as const))('mls %s reads MLS_CONFIG when --config is not given', (_line, args) => {
    const env: NodeJS.ProcessEnv = { ...process.env, MLS_CONFIG: bad, MLS_COMPILE_CACHE: 'off' };
    delete env.MLS_API_TOKEN;
    delete env.MLS_API_URL;
    const r = spawnSync(process.execPath, [MLS_BIN, ...args], { env, encoding: 'utf8', timeout: 20_000 });
    expect(r.stderr).toContain(bad);
    expect(r.stderr).toContain('poll.intervall: unknown key');
    expect(r.status).toBe(78);
  });

  it('every command with a --config option takes -c and MLS_CONFIG, and is in the list above', () => {
    const found: string[] = [];
    const walk = (cmd: ReturnType<typeof buildProgram>, path: string[]) => {
      for (const sub of cmd.commands) {
        const option = sub.options.find((o) => o.long === '--config');
        if (option) {
          found.push([...path, sub.name()].join(' '));
          expect(option.short).toBe('-c');
          expect(option.envVar).toBe('MLS_CONFIG');
        }
        walk(sub, [...path, sub.name()]);
      }
    };
    walk(buildProgram(), []);
    expect(found.sort()).toEqual(READERS.map((r) => r.filter((a) => !a.startsWith('-') && !['m', '1'].includes(a)).join(' ')).sort());
  });
});

describe('the service from the config', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  function config(url: string, more = ''): string {
    const file = join(dir, `service-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, `api:\n  base_url: ${url}\n  token: token-from-the-config\n  auth_scheme: bearer\nmodels: [{ id: m }]\nsinks: [{ name: out, type: stdout }]\n${more}`);
    return file;
  }

  const FROM = ['--from', '2024-05-01T12:00:00Z', '--to', '2024-05-01T12:05:00Z'];

  it('mls logs --config takes the URL, token and auth scheme from it; a flag given wins', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, logsPage([{ time: '2024-05-01T12:00:01Z', log: 'hello', stream: 'stdout' }])));
    const file = config(server.url);
    const r = await runCli(registerLogs, ['logs', '--model', 'm', '--config', file, ...FROM], { MLS_API_URL: 'http://127.0.0.1:9', MLS_API_TOKEN: 'env-token' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('"log":"hello"');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer token-from-the-config');
    const other = await startServer((_req, res) => sendJson(res, 200, logsPage([])));
    try {
      const flags = await runCli(registerLogs, ['logs', '--model', 'm', '-c', file, '--api-url', other.url, '--auth-scheme', 'raw', ...FROM], {});
      expect(flags.exitCode).toBe(0);
      expect(other.requests[0]!.headers.authorization).toBe('token-from-the-config');
    } finally {
      await other.close();
    }
  });

  it("mls logs --process --config prints records through the config's processing rules", async () => {
    const lines = ['INFO starting', 'ERROR key secret-abc123 leaked', 'DEBUG noise'];
    server = await startServer((_req, res) => sendJson(res, 200, logsPage(lines.map((log, i) => ({ time: `2024-05-01T12:00:0${i}Z`, log, stream: 'stdout' })))));
    const file = config(server.url, "processing:\n  min_level: info\n  redact: { rules: [{ pattern: 'secret-\\w+' }] }\n  levels: { rules: [{ match: '^INFO', level: warn }] }\n");
    const r = await runCli(registerLogs, ['logs', '--model', 'm', '--config', file, '--process', '--output', 'text', ...FROM], {});
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('2024-05-01T12:00:00Z stdout WARN INFO starting\n2024-05-01T12:00:01Z stdout ERROR ERROR key [REDACTED] leaked\n');
    // Processing off in the config: the entries as they are, as the daemon would ship them.
    const off = await runCli(registerLogs, ['logs', '--model', 'm', '--config', config(server.url, 'processing: off\n'), '--process', '--output', 'text', ...FROM], {});
    expect(off.stdout).toBe(lines.map((l, i) => `2024-05-01T12:00:0${i}Z stdout ${l}\n`).join(''));
  });

  it('mls settings update --config takes the URL and token from it', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { status: 'success', details: 'Model m updated.' }));
    const r = await runCli(registerSettings, ['settings', 'update', '--model', 'm', '--min-replica', '1', '--config', config(server.url)], {});
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('Model m updated.\n');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer token-from-the-config');
  });
});
