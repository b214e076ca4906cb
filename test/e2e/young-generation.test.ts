// Many models: `mls run` restarts itself once, in the same process, with a larger young
// generation, and then polls; an operator can keep the shipped size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { LARGE_FROM_CONFIG_BYTES, LARGE_FROM_MODELS, LARGE_SEMI_SPACE_MB } from '../../src/runtime/young-generation.js';
import { shippedCommand, startMls, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-young-gen-51e9a2';
const ids = Array.from({ length: LARGE_FROM_MODELS }, (_, i) => `yg-${i}`);
let dir: string;
let sim: Simulator;
let config: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-young-gen-'));
  sim = await startSimulator({ token: TOKEN, models: ids, ratePerSec: 0, seed: 5 });
  writeFileSync(join(dir, 'models.txt'), `${ids.join('\n')}\n`);
  config = writeConfig(dir, {
    api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
    state: { path: join(dir, 'state.db') },
    poll: { interval: '10s', start_at: '-30s', rate_limit: 'none' },
    models_file: 'models.txt',
    sinks: [{ name: 'files', type: 'file', path: join(dir, 'out', '{model_id}.ndjson') }],
    shutdown_timeout: '10s',
  });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Mls = ReturnType<typeof startMls>;

/**
 * Runs `mls run --config <configPath>` as the executable would (its shipped node flags and
 * environment, plus `env`), hands it to `check` with the service's request count at start,
 * then stops it with SIGTERM, which it must survive with exit code 0, whatever `check` did.
 */
async function runShipped(configPath: string, env: Record<string, string>, check: (p: Mls, requestsBefore: number) => Promise<void>): Promise<Mls> {
  const shipped = shippedCommand();
  const before = sim.stats().logsRequests;
  const p = startMls(['run', '--config', configPath], { ...shipped.env, MLS_API_TOKEN: TOKEN, ...env }, shipped.nodeArgs);
  try {
    await check(p, before);
  } finally {
    p.child.kill('SIGTERM');
    const end = await p.exited;
    expect(end.code, p.stderr()).toBe(0);
  }
  return p;
}

/** The JSON log lines of a run that carry `msg`. */
const lines = (stderr: string, msg: string) => stderr.split('\n').filter((l) => l.includes(msg)).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('young generation by the number of models', () => {
  it(`restarts once with ${LARGE_SEMI_SPACE_MB} MB semi-spaces in the same process, then polls`, { timeout: 60_000 }, async () => {
    const p = await runShipped(config, {}, async (p, before) => {
      await waitFor(() => p.stderr().includes('young generation raised'), 20_000, 'the restart', 100, p.stderr);
      const [raised] = lines(p.stderr(), 'young generation raised');
      expect(raised).toMatchObject({ pid: p.child.pid, models: LARGE_FROM_MODELS, semiSpaceMb: LARGE_SEMI_SPACE_MB });
      await waitFor(() => sim.stats().logsRequests > before + 100, 20_000, 'requests after the restart', 200, p.stderr);
      // One start of the daemon: its startup is logged once.
      expect(lines(p.stderr(), 'young generation raised')).toHaveLength(1);
      expect(p.child.exitCode).toBeNull();
    });
    expect(p.stderr()).not.toContain('could not restart');
  });

  it('a config file of 128 KB or more restarts before it is read, whatever number of models it holds', { timeout: 60_000 }, async () => {
    const few = ids.slice(0, 50);
    // 50 models, and a note long enough to make the file large.
    const line = (i: number) => `# padding line ${String(i).padStart(6, '0')} of a long comment in the file\n`;
    const note = Array.from({ length: Math.ceil(LARGE_FROM_CONFIG_BYTES / line(0).length) }, (_, i) => line(i)).join('');
    const big = join(dir, 'big.yaml');
    writeFileSync(
      big,
      `${note}api:\n  base_url: ${sim.url}\n  token: \${MLS_API_TOKEN}\nstate:\n  path: ${join(dir, 'big-state.db')}\npoll:\n  interval: 10s\n  start_at: -30s\n  rate_limit: none\n` +
        `models:\n${few.map((id) => `  - id: ${id}\n`).join('')}sinks:\n  - name: files\n    type: file\n    path: ${join(dir, 'big-out', '{model_id}.ndjson')}\nshutdown_timeout: 10s\n`,
    );
    await runShipped(big, {}, async (p, before) => {
      await waitFor(() => p.stderr().includes('young generation raised'), 20_000, 'the restart', 100, p.stderr);
      const [raised] = lines(p.stderr(), 'young generation raised');
      expect(raised).toMatchObject({ pid: p.child.pid, models: few.length, semiSpaceMb: LARGE_SEMI_SPACE_MB });
      expect(raised!.configBytes).toBeGreaterThanOrEqual(LARGE_FROM_CONFIG_BYTES);
      await waitFor(() => sim.stats().logsRequests >= before + few.length, 20_000, 'a request for each model after the restart', 200, p.stderr);
      expect(lines(p.stderr(), 'young generation raised')).toHaveLength(1);
    });
  });

  it('MLS_YOUNG_GENERATION=keep keeps the shipped size', { timeout: 60_000 }, async () => {
    await runShipped(config, { MLS_YOUNG_GENERATION: 'keep' }, async (p, before) => {
      await waitFor(() => sim.stats().logsRequests > before + 100, 20_000, 'requests', 200, p.stderr);
      expect(p.stderr()).not.toContain('young generation');
    });
  });
});
