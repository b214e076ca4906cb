import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MLS_BIN, ROOT } from '../e2e/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'mls-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The modules `mls <args>` loads (paths inside the checkout). */
function loads(name: string, args: string[]): string[] {
  const file = join(dir, `${name}.txt`);
  writeFileSync(file, '');
  const r = spawnSync(process.execPath, ['--import', join(ROOT, 'test/fixtures/startup/record-loads.mjs'), MLS_BIN, ...args], {
    env: { ...process.env, MLS_TEST_LOADS: file, MLS_COMPILE_CACHE: 'off' },
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((u) => u.replace(`file://${ROOT}/`, ''));
}

describe('what a command loads', () => {
  it('mls --version loads no config schema, state file code, SQLite, logger, page reader or processing', () => {
    const loaded = loads('version', ['--version']);
    expect(loaded).toContain('dist/cli/program.js');
    expect(loaded.filter((u) => /node_modules\/(zod|better-sqlite3|js-yaml|pino)\/|dist\/(config|journal|daemon|sinks|api|processing|poller)\/|dist\/telemetry\/logger\.js/.test(u))).toEqual([]);
  });

  it("mls status loads the state file's code only to read the state file", () => {
    // No daemon and no state file: the command stops once it has read the config.
    const config = join(dir, 'mls.yaml');
    writeFileSync(config, `api:\n  base_url: http://127.0.0.1:9/\n  token: t\nmodels: [{ id: m1 }]\nsinks:\n  - name: out\n    type: stdout\nstate:\n  path: ${join(dir, 'none', 'state.db')}\n`);
    const file = join(dir, 'status.txt');
    writeFileSync(file, '');
    const r = spawnSync(process.execPath, ['--import', join(ROOT, 'test/fixtures/startup/record-loads.mjs'), MLS_BIN, 'status', '--config', config], {
      env: { ...process.env, MLS_TEST_LOADS: file, MLS_COMPILE_CACHE: 'off' },
      encoding: 'utf8',
    });
    expect(r.stderr).toMatch(/does not exist yet/);
    const loaded = readFileSync(file, 'utf8');
    expect(loaded).toMatch(/dist\/config\/index\.js/);
    expect(loaded).not.toMatch(/dist\/journal\/|better-sqlite3/);
    // Nor the logger (a command that only prints does not log), nor `mls logs`' own code and
    // the processing pipeline it prints through (the config's checks of processing options load
    // the level tables only).
    expect(loaded).not.toMatch(/node_modules\/pino\/|dist\/telemetry\/logger\.js|dist\/cli\/logs-run\.js|dist\/processing\/pipeline\.js/);
  });

  it('mls logs loads its own code, and neither the config schema nor the state file code', () => {
    // Nothing listens on port 9: the command stops at its first request.
    const file = join(dir, 'logs.txt');
    writeFileSync(file, '');
    const r = spawnSync(process.execPath, ['--import', join(ROOT, 'test/fixtures/startup/record-loads.mjs'), MLS_BIN, 'logs', '--model', 'm1', '--api-url', 'http://127.0.0.1:9', '--timeout', '1s'], {
      env: { ...process.env, MLS_API_TOKEN: 't', MLS_TEST_LOADS: file, MLS_COMPILE_CACHE: 'off' },
      encoding: 'utf8',
    });
    expect(r.stderr).toMatch(/cannot reach the service/);
    const loaded = readFileSync(file, 'utf8');
    expect(loaded).toMatch(/dist\/cli\/logs-run\.js/);
    // The defaults it shares with the daemon come from a module of their own, not the schema.
    expect(loaded).toMatch(/dist\/config\/defaults\.js/);
    expect(loaded).not.toMatch(/node_modules\/(zod|better-sqlite3|js-yaml)\/|dist\/config\/(schema|index)\.js|dist\/journal\//);
  });
});
