// A custom sink module that breaks its contract, run by `mls run`: its delivery loop never
// ends, the fault shows in /status, /metrics and /readyz, and every entry arrives once it
// behaves. A send that never settles is cut off by the sink's timeout, a reload that removes
// such a sink completes, and a shutdown with one still hanging ends within shutdown_timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { writeHostileSink } from '../helpers/hostile-sink.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, startMls, truthSince, waitFor, adminAddress } from './harness.js';

const TOKEN = 'tok-sink-contract-7c3e';
const env = { MLS_API_TOKEN: TOKEN };
let dir: string;
let modulePath: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mls-contract-e2e-'));
  modulePath = writeHostileSink(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, cfg: unknown): string {
  const p = join(dir, `${name}.yaml`);
  writeFileSync(p, stringify(cfg));
  return p;
}


interface SinkStatus {
  name: string;
  lastError?: string;
  failingSeconds?: number;
}
async function sinkStatus(address: string, name: string): Promise<SinkStatus | undefined> {
  const st = (await (await fetch(`http://${address}/status`)).json()) as { sinks: SinkStatus[] };
  return st.sinks.find((s) => s.name === name);
}

function readLines(path: string): Array<{ model_id: string; time: string; stream: string; log: string }> {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { model_id: string; time: string; stream: string; log: string });
}

describe('a module sink that breaks its contract, in the daemon', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2'], ratePerSec: 30, historyMs: 10_000, seed: 21 });
  });
  afterAll(async () => sim?.close());

  it('shows the fault in /status, /metrics and /readyz, keeps its loop, and delivers everything once it behaves', { timeout: 120_000 }, async () => {
    const base = join(dir, 'malformed');
    const healFile = join(base, 'healed');
    const plugOut = join(base, 'plug.ndjson');
    const statePath = join(base, 'state.db');
    const file = write('malformed', {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: statePath },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-10s', max_window: '1m', rate_limit: 'none', reread: { ages: ['1s'] } },
      models: [{ id: 'm1' }, { id: 'm2' }],
      sinks: [
        {
          name: 'plug',
          type: 'module',
          path: modulePath,
          options: { mode: 'undefined', healFile, out: plugOut },
          batch: { max_entries: 100, max_delay: '50ms' },
          retry: { base_delay: '50ms', max_delay: '300ms' },
        },
      ],
      // The journal fills while the sink fails: polling pauses, and must resume.
      buffer: { max_entries: 300, when_full: 'block' },
      admin: { listen: '127.0.0.1:0' },
      health: { max_lag: '4s' },
      shutdown_timeout: '10s',
    });
    const p = startMls(['run', '--config', file], env);
    let readyzBody = '';
    try {
      const address = await adminAddress(p);
      await waitFor(async () => /broke the sink contract: send resolved to undefined/.test((await sinkStatus(address, 'plug'))?.lastError ?? ''), 20_000, 'lastError of the sink in /status');
      const metrics = await (await fetch(`http://${address}/metrics`)).text();
      expect(Number(/mls_sink_errors_total\{sink="plug"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
      expect(metrics).toContain('mls_sink_batches_total{sink="plug",outcome="retry"}');
      expect([...metrics.matchAll(/outcome="([^"]*)"/g)].map((m) => m[1]).every((o) => ['ok', 'retry', 'reject'].includes(o!))).toBe(true);
      await waitFor(async () => {
        const res = await fetch(`http://${address}/readyz`);
        readyzBody = await res.text();
        return res.status === 503 && readyzBody.includes('sink plug has failed without delivering');
      }, 30_000, '/readyz to report the failing sink');
      expect(readyzBody).toContain('broke the sink contract');
      await waitFor(() => p.stderr().includes('journal full: polling paused'), 30_000, 'polling to pause on a full journal');

      writeFileSync(healFile, '');
      await waitFor(() => p.stderr().includes('polling resumes'), 30_000, 'polling to resume');
      sim.stopProducing();
      const stoppedAt = Date.now();
      await waitFor(() => {
        const st = readState(statePath);
        return !!st && [...st.watermarks.values()].every((w) => (w ?? 0) > stoppedAt + 2_500) && st.cursors.get('plug') === st.lastSeq;
      }, 60_000, 'the sink to catch up');
      await waitFor(async () => (await fetch(`http://${address}/readyz`)).status === 200, 30_000, '/readyz to recover');
      const healed = await sinkStatus(address, 'plug');
      expect(healed?.lastError).toBeUndefined();
      expect(healed?.failingSeconds).toBeUndefined();
    } finally {
      p.child.kill('SIGTERM');
    }
    const end = await p.exited;
    expect(end.code, p.stderr()).toBe(0);
    expect(p.stderr()).not.toContain('sink delivery stopped by an unexpected error');
    const st = readState(statePath)!;
    const truth = [...sim.groundTruth('m1'), ...sim.groundTruth('m2')];
    const figures = compareMultisets(truthSince(truth, st.starts).map(entryKey), readLines(plugOut).map(entryKey));
    console.log(`malformed outcomes (until healed): produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}; /readyz said: ${readyzBody.trim().split('\n').join(' | ')}`);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});

describe('a module sink whose send never settles, in the daemon', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, models: ['m1'], ratePerSec: 20, historyMs: 5_000, seed: 22 });
  });
  afterAll(async () => sim?.close());

  function config(name: string, sinks: unknown[], over: Record<string, unknown> = {}) {
    const base = join(dir, name);
    return {
      api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
      state: { path: join(base, 'state.db') },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-5s', max_window: '1m', rate_limit: 'none' },
      models: [{ id: 'm1' }],
      sinks: [{ name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }, ...sinks],
      admin: { listen: '127.0.0.1:0' },
      ...over,
    };
  }
  const stuck = (timeout?: string) => ({ name: 'stuck', type: 'module', path: modulePath, options: { mode: 'hang', holdProcess: true }, ...(timeout ? { timeout } : {}), retry: { base_delay: '50ms', max_delay: '200ms' } });

  it('is cut off by its timeout, and removing it by SIGHUP completes the reload', { timeout: 90_000 }, async () => {
    const file = write('stuck-reload', config('stuck-reload', [stuck('1s')], { shutdown_timeout: '10s' }));
    const p = startMls(['run', '--config', file], env);
    try {
      const address = await adminAddress(p);
      await waitFor(async () => /^sink stuck: send did not finish within 1s/.test((await sinkStatus(address, 'stuck'))?.lastError ?? ''), 20_000, 'the timeout in /status');
      const metrics = await (await fetch(`http://${address}/metrics`)).text();
      expect(Number(/mls_sink_errors_total\{sink="stuck"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);

      write('stuck-reload', config('stuck-reload', [], { shutdown_timeout: '10s' }));
      const hupAt = Date.now();
      p.child.kill('SIGHUP');
      await waitFor(() => p.stderr().includes('configuration reloaded'), 20_000, 'the reload to complete', 20);
      console.log(`stuck module sink (timeout 1s) removed by SIGHUP: reload completed ${Date.now() - hupAt} ms after the signal`);
      expect(p.stderr()).toContain('reload: sink removed');
      const before = readNdjsonTree(join(dir, 'stuck-reload', 'out')).length;
      await waitFor(() => readNdjsonTree(join(dir, 'stuck-reload', 'out')).length > before, 15_000, 'the file sink to go on after the reload');
    } finally {
      p.child.kill('SIGTERM');
    }
    // The removed module left a timer running: the process still ends, with code 0.
    const end = await p.exited;
    expect(end.code, p.stderr()).toBe(0);
    expect(p.stderr()).not.toContain('shutdown timed out');
  });

  it('does not hold a shutdown past shutdown_timeout, with its default timeout of 30s', { timeout: 90_000 }, async () => {
    const file = write('stuck-stop', config('stuck-stop', [stuck()], { shutdown_timeout: '6s' }));
    const p = startMls(['run', '--config', file], env);
    let stopMs = 0;
    try {
      await adminAddress(p);
      // The file sink delivers, the stuck one holds its first batch.
      await waitFor(() => {
        const st = readState(join(dir, 'stuck-stop', 'state.db'));
        return !!st && (st.cursors.get('files') ?? 0) > 0 && (st.cursors.get('stuck') ?? 0) < st.lastSeq;
      }, 20_000, 'a batch to hang in the stuck sink');
    } finally {
      const t0 = Date.now();
      p.child.kill('SIGTERM');
      await p.exited;
      stopMs = Date.now() - t0;
    }
    const end = await p.exited;
    console.log(`stuck module sink (timeout 30s) at shutdown: exited ${end.code} after ${stopMs} ms (shutdown_timeout 6s)`);
    expect(end.code, p.stderr()).toBe(0);
    expect(p.stderr()).not.toContain('shutdown timed out');
    expect(p.stderr()).toContain('stopping the delivery loop of sink stuck did not finish');
    expect(p.stderr()).toContain('"msg":"stopped"');
  });
});
