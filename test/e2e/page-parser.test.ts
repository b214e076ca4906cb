// The readers of pages, seen from outside the daemon: MLS_PAGE_PARSER starts pages at a
// later one, and a page.wasm that does not load is said once, with the reason, while the
// JavaScript scanner reads every page. Whichever reader it is, every entry reaches the file
// once and unaltered.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Daemon } from '../../src/daemon/index.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { ROOT, compareMultisets, entryKey, readNdjsonTree, readState, truthSince, waitFor, writeConfig } from './harness.js';

const TOKEN = 'tok-page-parser-3d91';
const MODELS = ['p1', 'p2'];
let dir: string;
let sim: Simulator;
let stoppedAt = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-page-parser-'));
  // Unicode, multi-line and long lines, short fractions: strings of every kind the scanners class.
  sim = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 50, historyMs: 20_000, pageSize: 100, unicodeRate: 0.1, multilineRate: 0.1, longRate: 0.01, seed: 41 });
  sim.stopProducing();
  stoppedAt = Date.now();
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

function rawConfig(name: string, admin = false) {
  const base = join(dir, name);
  return {
    api: { base_url: sim.url, token: TOKEN },
    state: { path: join(base, 'state.db') },
    poll: { interval: '1s', settle: '100ms', start_at: '-30s', max_window: '1h', rate_limit: 'none' },
    models: MODELS.map((id) => ({ id })),
    sinks: [{ name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '20ms' } }],
    ...(admin ? { admin: { listen: '127.0.0.1:0' } } : {}),
  };
}

/** Every model read past the end of the simulator's entries, and every entry in the file. */
function allDelivered(statePath: string): boolean {
  const st = readState(statePath);
  return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt) && st.cursors.get('files') === st.lastSeq;
}

/** The file's entries against the simulator's ground truth since each model's start. */
function shipped(name: string): ReturnType<typeof compareMultisets> {
  const st = readState(join(dir, name, 'state.db'))!;
  return compareMultisets(truthSince(sim.groundTruth(), st.starts).map(entryKey), readNdjsonTree(join(dir, name, 'out')).map(entryKey));
}

/** The sum of `mls_pages_total` over the models. */
function pagesCommitted(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/^mls_pages_total\{model="\w+"\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

describe('the reader of pages', () => {
  it.each(['kernel', 'javascript', 'json'] as const)('MLS_PAGE_PARSER=%s: every entry shipped once', { timeout: 60_000 }, async (path) => {
    vi.stubEnv('MLS_PAGE_PARSER', path);
    const config = parseConfig(rawConfig(path), { baseDir: dir, env: {} });
    const metrics = new Metrics({ processMetrics: false });
    const daemon = await Daemon.start({ config, logger: pino({ level: 'warn' }), metrics });
    try {
      await waitFor(() => allDelivered(config.state.path), 40_000, 'every entry delivered');
    } finally {
      await daemon.stop();
    }
    const text = await metrics.text();
    expect(pagesCommitted(text)).toBeGreaterThan(10);
    const figures = shipped(path);
    console.log(`page reader ${path}: pages committed ${pagesCommitted(text)}; entries ${JSON.stringify(figures)}`);
    expect(figures.expected).toBeGreaterThan(1_000);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });

  it('a page.wasm that does not load: one warning with the reason, the JavaScript scanner reads every page', { timeout: 90_000 }, async () => {
    // The compiled daemon as installed, with its page.wasm missing.
    const install = join(dir, 'install');
    cpSync(join(ROOT, 'dist'), join(install, 'dist'), { recursive: true });
    const wasm = join(install, 'dist', 'api', 'page', 'kernel', 'page.wasm');
    expect(existsSync(wasm)).toBe(true);
    rmSync(wasm);
    copyFileSync(join(ROOT, 'package.json'), join(install, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(install, 'node_modules'));

    const configPath = writeConfig(dir, rawConfig('no-kernel', true), 'no-kernel.yaml');
    const child = spawn(process.execPath, [join(install, 'dist', 'cli', 'main.js'), 'run', '--config', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let text = '';
    try {
      let address = '';
      await waitFor(() => {
        address = /"address":"([^"]+)"[^\n]*admin server listening/.exec(stderr)?.[1] ?? '';
        return address !== '';
      }, 20_000, 'the admin server to listen', 100, () => stderr);
      await waitFor(() => allDelivered(join(dir, 'no-kernel', 'state.db')), 40_000, 'every entry delivered', 200, () => stderr);
      text = await (await fetch(`http://${address}/metrics`)).text();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stderr).toBe(0);
    const warnings = stderr.split('\n').filter((line) => line.includes('page kernel did not load'));
    expect(warnings).toHaveLength(1);
    const warning = JSON.parse(warnings[0]!) as { level: string; reason: string };
    expect(warning.level).toBe('warn');
    expect(warning.reason).toMatch(/ENOENT.*page\.wasm/);
    expect(pagesCommitted(text)).toBeGreaterThan(10);
    const figures = shipped('no-kernel');
    console.log(`page reader without page.wasm: warning ${JSON.stringify(warning.reason)}; pages committed ${pagesCommitted(text)}; entries ${JSON.stringify(figures)}`);
    expect(figures.expected).toBeGreaterThan(1_000);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});
