// The daemon pointed at a read-only file system: its state directory, or a file sink's
// output directory, is a read-only tmpfs mounted in a private mount namespace (`unshare`;
// skipped where namespaces are not allowed). The error says EROFS once, names the path
// once, and says which setting to change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { MLS_BIN, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-readonly-51be07';
const canMountReadOnly = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o ro tmpfs "$0"', tmpdir()]).status === 0;
let dir: string;
let roDir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-ro-'));
  roDir = join(dir, 'ro');
  mkdirSync(roDir);
  sim = await startSimulator({ token: TOKEN, models: ['ro-model'], ratePerSec: 20, historyMs: 10_000, seed: 5 });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `mls run` with `roDir` a read-only tmpfs (with `sub` folders inside) for it alone. */
function runOnReadOnly(config: string, sub: string[]) {
  const script = `mount -t tmpfs tmpfs "$0" && mkdir -p ${sub.map((s) => `"$0/${s}"`).join(' ')} && mount -o remount,ro "$0" && exec "$@"`;
  const child = spawn('unshare', ['-rm', 'sh', '-c', script, roDir, process.execPath, MLS_BIN, 'run', '--config', config], {
    env: { ...process.env, MLS_API_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

const count = (text: string, part: string) => text.split(part).length - 1;

const base = () => ({
  api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
  poll: { interval: '300ms', settle: '100ms', start_at: '-5s', rate_limit: 'none' },
  models: [{ id: 'ro-model' }],
  shutdown_timeout: '5s',
});

describe.skipIf(!canMountReadOnly)('a read-only file system', () => {
  it('under the state file: one line, EROFS and the path once, and the setting to change; exit 5', { timeout: 30_000 }, async () => {
    const statePath = join(roDir, 'state', 'state.db');
    const config = writeConfig(dir, { ...base(), state: { path: statePath }, sinks: [{ name: 'console', type: 'stdout' }] }, 'state-ro.yaml');
    const run = runOnReadOnly(config, ['state']);
    expect(await run.exited).toBe(5);
    const lines = run.stderr().split('\n').filter(Boolean);
    expect(lines, run.stderr()).toHaveLength(1);
    const [line] = lines as [string];
    expect(count(line, 'EROFS')).toBe(1);
    expect(count(line, `${statePath}.lock`)).toBe(1);
    expect(line).toMatch(/; set state\.path to a path on a writable file system/);
    console.log(`read-only state: ${line}`);
  });

  it("under a file sink: each line says EROFS once, with the sink's path to change", { timeout: 60_000 }, async () => {
    const config = writeConfig(
      dir,
      { ...base(), state: { path: join(dir, 'state', 'state.db') }, sinks: [{ name: 'archive', type: 'file', path: join(roDir, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }] },
      'sink-ro.yaml',
    );
    const run = runOnReadOnly(config, ['out']);
    try {
      await waitFor(() => /sink send failed/.test(run.stderr()) || run.child.exitCode !== null, 20_000, 'the file sink to fail');
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
    const lines = run.stderr().split('\n').filter((l) => l.includes('EROFS'));
    expect(lines.length, run.stderr()).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      const fields = JSON.parse(line) as Record<string, unknown>;
      const told = [fields.err, fields.error, fields.fix].filter((v) => typeof v === 'string').join(' ');
      expect(count(told, 'EROFS: read-only file system'), line).toBe(1);
      expect(told, line).toContain('set the path of sink archive to a path on a writable file system');
    }
    console.log(`read-only file sink: ${lines.length} lines, e.g. ${lines[0]}`);
  });
});
