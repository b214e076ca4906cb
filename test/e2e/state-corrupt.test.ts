// A damaged state file (emptied, cut short, or its header overwritten) while the daemon is
// stopped: `mls run` refuses to start with exit 5, naming the file and `mls state check`;
// `mls state check` exits non-zero with recovery advice; and the damaged file is left exactly
// as it was — never replaced by a fresh one that would silently reset the checkpoints. A
// state file of a newer mls is refused by `mls run` and by every command that reads it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, closeSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { readNdjsonTree, runMls, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-corrupt-test-2a6f0d';
let dir: string;
let sim: Simulator;
let healthy: string;

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function configFor(name: string): { config: string; statePath: string } {
  const base = join(dir, name);
  mkdirSync(base, { recursive: true });
  const statePath = join(base, 'state', 'state.db');
  const config = writeConfig(base, {
    api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
    state: { path: statePath },
    poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-20s', max_window: '1m', rate_limit: 'none' },
    models: [{ id: 'm1' }, { id: 'm2' }],
    sinks: [{ name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
    shutdown_timeout: '10s',
  });
  return { config, statePath };
}

const env = { MLS_API_TOKEN: TOKEN };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-corrupt-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 200, historyMs: 20_000, seed: 21 });
  // A healthy state file with checkpoints, cursors and thousands of dedupe keys.
  const { config, statePath } = configFor('healthy');
  const p = startMls(['run', '--config', config], env);
  await waitFor(() => readNdjsonTree(join(dir, 'healthy', 'out')).length > 6_000, 20_000, 'entries');
  p.child.kill('SIGTERM');
  const end = await p.exited;
  expect(end.code, p.stderr()).toBe(0);
  expect(existsSync(`${statePath}-wal`) && statSync(`${statePath}-wal`).size > 0).toBe(false);
  healthy = statePath;
}, 40_000);

afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

const damage: Array<[string, (path: string) => void]> = [
  // SQLite would take an empty file for a new database: the daemon would start over from start_at.
  ['emptied (0 bytes)', (p) => truncateSync(p, 0)],
  ['cut short in the middle', (p) => truncateSync(p, Math.floor(statSync(p).size / 2))],
  [
    'with its header overwritten',
    (p) => {
      const fd = openSync(p, 'r+');
      writeSync(fd, Buffer.alloc(100, 'overwritten by mistake; '), 0, 100, 0);
      closeSync(fd);
    },
  ],
  [
    'with pages in the middle overwritten',
    (p) => {
      const size = statSync(p).size;
      const fd = openSync(p, 'r+');
      writeSync(fd, Buffer.alloc(Math.floor(size / 3), 0xa5), 0, Math.floor(size / 3), 4096);
      closeSync(fd);
    },
  ],
];

describe('a damaged state file', () => {
  it.each(damage)('%s: mls run exits 5 naming the file, state check advises, the file is kept', { timeout: 30_000 }, async (name, hurt) => {
    const { config, statePath } = configFor(name.replaceAll(' ', '-'));
    mkdirSync(join(statePath, '..'), { recursive: true, mode: 0o700 });
    copyFileSync(healthy, statePath);
    const sizeBefore = statSync(statePath).size;
    hurt(statePath);
    const damaged = sha(statePath);
    const damagedSize = statSync(statePath).size;

    // started three times, as a supervisor would restart it: the same refusal each time
    for (let i = 0; i < 3; i++) {
      const run = await runMls(['run', '--config', config], env);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain(statePath);
      expect(run.stderr).toMatch(/mls state check/);
      expect(run.stderr).toMatch(/MLS_ERR_STATE_CORRUPT|corrupt|damaged/i);
      expect(run.stderr).not.toMatch(/unexpected error|at .*\.js:\d+/);
      expect(sha(statePath), 'the damaged file is left as it was').toBe(damaged);
      if (i === 0) console.log(`state corruption (${name}, ${sizeBefore} → ${damagedSize} bytes): mls run says: ${run.stderr.trim().split('\n').slice(-1)[0]}`);
    }
    expect(readNdjsonTree(join(statePath, '..', '..', 'out'))).toHaveLength(0); // nothing was fetched from a reset checkpoint

    const check = await runMls(['state', 'check', '--config', config], env);
    expect(check.code, check.stdout + check.stderr).toBe(5);
    expect(check.stderr).toContain(statePath);
    expect(check.stderr).toMatch(/move .* aside|restore/);
    expect(check.stderr).toMatch(/start_at/); // says what starting over costs
    expect(sha(statePath)).toBe(damaged);
  });

  it('the healthy original still passes mls state check', async () => {
    const { config, statePath } = configFor('healthy-check');
    mkdirSync(join(statePath, '..'), { recursive: true, mode: 0o700 });
    copyFileSync(healthy, statePath);
    const check = await runMls(['state', 'check', '--config', config], env);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/is healthy: 2 model checkpoints/);
  });

  it('of a newer mls: mls run and every command that reads it exit 5 and say so; the file is kept', { timeout: 60_000 }, async () => {
    const { config, statePath } = configFor('newer');
    mkdirSync(join(statePath, '..'), { recursive: true, mode: 0o700 });
    copyFileSync(healthy, statePath);
    const newer = MIGRATIONS[MIGRATIONS.length - 1]!.version + 1;
    const db = new Database(statePath);
    db.pragma(`user_version = ${newer}`);
    db.close();
    const before = sha(statePath);
    for (const args of [['run'], ['status'], ['settings', 'plan'], ['settings', 'history'], ['dlq', 'list'], ['state', 'check']]) {
      const r = await runMls([...args, '--config', config], env);
      const what = `mls ${args.join(' ')}`;
      expect(r.code, `${what}: ${r.stdout}${r.stderr}`).toBe(5);
      expect(r.stderr, what).toContain(`state file ${statePath} has schema version ${newer}, newer than this mls understands`);
      expect(r.stderr, what).not.toMatch(/unexpected error|is corrupt|at .*\.js:\d+/);
      expect(sha(statePath), what).toBe(before);
    }
  });
});
