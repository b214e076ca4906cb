// Process behaviour of `mls run`: single-writer lock, clean shutdown, admin endpoints,
// `mls status`, configuration reload on SIGHUP, sink healthchecks at start, and what keeps
// the process up (the daemon itself, until it has stopped).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { ROOT, readNdjsonTree, readState, runMls, sleep, startMls, waitFor, adminAddress } from './harness.js';

const TOKEN = 'tok-daemon-test-51b2e8';
let dir: string;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-daemon-'));
  sim = await startSimulator({ token: TOKEN, models: ['m1', 'm2', 'm3'], ratePerSec: 20, historyMs: 20_000, seed: 3 });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

function config(name: string, over: { models?: string[]; sinks?: unknown[]; admin?: boolean } = {}) {
  const base = join(dir, name);
  return {
    api: { base_url: sim.url, token: '${MLS_API_TOKEN}' },
    state: { path: join(base, 'state.db') },
    poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-15s', max_window: '1m', rate_limit: 'none' },
    models: (over.models ?? ['m1', 'm2']).map((id) => ({ id })),
    sinks: over.sinks ?? [{ name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } }],
    ...(over.admin ? { admin: { listen: '127.0.0.1:0' } } : {}),
    shutdown_timeout: '10s',
  };
}

function write(name: string, cfg: unknown): string {
  const p = join(dir, `${name}.yaml`);
  writeFileSync(p, stringify(cfg));
  return p;
}

const env = { MLS_API_TOKEN: TOKEN };


describe('mls run', () => {
  it('refuses a second daemon on the same state file, and stops cleanly on SIGTERM', { timeout: 60_000 }, async () => {
    const file = write('lock', config('lock'));
    const first = startMls(['run', '--config', file], env);
    await waitFor(() => (readState(join(dir, 'lock', 'state.db'))?.lastSeq ?? 0) > 0, 15_000, 'entries');
    const second = await runMls(['run', '--config', file], env);
    expect(second.code).toBe(5);
    expect(second.stderr).toMatch(/in use by another mls daemon \(pid \d+\)/);
    first.child.kill('SIGTERM');
    const end = await first.exited;
    expect(end.code, first.stderr()).toBe(0);
    expect(first.stderr()).toContain('"msg":"stopped"');
    expect(first.stderr() + second.stderr).not.toContain(TOKEN);
  });

  it('serves /metrics, /healthz, /readyz and /status, and mls status reads them', { timeout: 60_000 }, async () => {
    const file = write('admin', config('admin', { admin: true }));
    let installationId = '';
    const p = startMls(['run', '--config', file], env);
    try {
      const address = await adminAddress(p);
      await waitFor(async () => (await fetch(`http://${address}/readyz`)).status === 200, 20_000, 'readiness');
      const metrics = await (await fetch(`http://${address}/metrics`)).text();
      for (const name of ['mls_model_lag_seconds{model="m1"}', 'mls_entries_fetched_total{model="m2"}', 'mls_sink_delivered_total{sink="files"}', 'mls_sink_backlog_entries{sink="files"}', 'mls_api_request_duration_seconds_bucket', 'mls_process_resident_memory_bytes']) {
        expect(metrics).toContain(name);
      }
      expect(metrics).not.toContain(TOKEN);
      expect((await fetch(`http://${address}/healthz`)).status).toBe(200);
      const status = (await (await fetch(`http://${address}/status`)).json()) as { installationId: string; models: { id: string }[]; sinks: { name: string }[] };
      expect(status.models.map((m) => m.id).sort()).toEqual(['m1', 'm2']);
      expect(status.sinks.map((s) => s.name)).toEqual(['files']);
      // The state file's installation id, which goes into every batch's Idempotency-Key.
      expect(status.installationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      installationId = status.installationId;
      // a config naming the daemon's actual admin address lets `mls status` ask it
      const cfg = config('admin', { admin: true });
      const asked = write('admin-status', { ...cfg, admin: { listen: address } });
      const st = await runMls(['status', '--config', asked], env);
      expect(st.code, st.stderr).toBe(0);
      expect(st.stdout).toContain(`source: daemon at ${address}`);
      expect(st.stdout).toContain(`installation: ${installationId}`);
      expect(st.stdout).toMatch(/m1\s+\d{4}-/);
      expect(st.stdout + st.stderr).not.toContain(TOKEN);
    } finally {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    // stopped: the same command reads the state file
    const st = await runMls(['status', '--config', file], env);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain('source: state file');
    expect(st.stdout).toContain(`installation: ${installationId}`);
    expect(st.stdout).toMatch(/files\s+file\s+\d+/);
    const json = await runMls(['status', '--config', file, '--json'], env);
    expect((JSON.parse(json.stdout) as { installationId: string }).installationId).toBe(installationId);
  });

  it('reloads on SIGHUP: adds a model and a sink, and keeps the old config when the new one is invalid', { timeout: 60_000 }, async () => {
    const base = join(dir, 'reload');
    const file = write('reload', config('reload', { models: ['m1'] }));
    const p = startMls(['run', '--config', file], env);
    try {
      await waitFor(() => readNdjsonTree(join(base, 'out')).length > 0, 15_000, 'first entries');
      const sinks = [
        { name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } },
        { name: 'second', type: 'file', path: join(base, 'second', '{model_id}.ndjson'), batch: { max_delay: '50ms' } },
      ];
      write('reload', config('reload', { models: ['m1', 'm3'], sinks }));
      p.child.kill('SIGHUP');
      await waitFor(() => p.stderr().includes('configuration reloaded'), 10_000, 'the reload');
      await waitFor(() => readNdjsonTree(join(base, 'out')).some((e) => e.model_id === 'm3'), 15_000, 'entries of the added model');
      await waitFor(() => readNdjsonTree(join(base, 'second')).length > 0, 15_000, 'entries in the added sink');

      writeFileSync(file, 'api: {base_url: 42}\nbogus: true\n');
      p.child.kill('SIGHUP');
      await waitFor(() => p.stderr().includes('reload rejected'), 10_000, 'the rejection');
      const before = readNdjsonTree(join(base, 'out')).length;
      await sleep(1_500);
      expect(readNdjsonTree(join(base, 'out')).length).toBeGreaterThan(before);
      expect(p.child.exitCode).toBeNull();
    } finally {
      p.child.kill('SIGTERM');
      const end = await p.exited;
      expect(end.code, p.stderr()).toBe(0);
    }
    expect(p.stderr()).not.toContain(TOKEN);
  });

  it('refuses a reload whose file sinks would write one file, naming both, and keeps the running config', { timeout: 60_000 }, async () => {
    const base = join(dir, 'overlap');
    const file = write('overlap', config('overlap', { models: ['m1'] }));
    const p = startMls(['run', '--config', file], env);
    try {
      await waitFor(() => readNdjsonTree(join(base, 'out')).length > 0, 15_000, 'first entries');
      const sinks = [
        { name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } },
        // The same files, reached through another spelling of the folder.
        { name: 'again', type: 'file', path: join(base, 'elsewhere', '..', 'out', 'm1.ndjson'), batch: { max_delay: '50ms' } },
      ];
      write('overlap', config('overlap', { models: ['m1'], sinks }));
      p.child.kill('SIGHUP');
      await waitFor(() => p.stderr().includes('reload rejected'), 10_000, 'the rejection');
      const line = p.stderr().split('\n').find((l) => l.includes('reload rejected'))!;
      expect(line).toContain('sinks[1].path');
      expect(line).toContain('can name the same file as sinks[0].path');
      expect(line).toContain(join(base, 'out', 'm1.ndjson'));
      expect(p.stderr()).not.toContain('reload: sink started');
      const before = readNdjsonTree(join(base, 'out')).length;
      await waitFor(() => readNdjsonTree(join(base, 'out')).length > before, 15_000, 'the running sink to go on');
    } finally {
      p.child.kill('SIGTERM');
      const end = await p.exited;
      expect(end.code, p.stderr()).toBe(0);
    }
    // Nothing was written twice into the file the rejected sink would have shared.
    const logs = readNdjsonTree(join(base, 'out')).map((e) => JSON.stringify([e.time, e.stream, e.log]));
    expect(new Set(logs).size).toBe(logs.length);
  });

  it("warns at start of a sink whose healthcheck fails, naming the sink and the detail, and runs all the same", { timeout: 60_000 }, async () => {
    const port = await closedPort();
    const base = join(dir, 'health');
    const sinks = [
      { name: 'files', type: 'file', path: join(base, 'out', '{model_id}.ndjson'), batch: { max_delay: '50ms' } },
      { name: 'hook', type: 'webhook', url: `http://127.0.0.1:${port}/ingest`, retry: { base_delay: '50ms', max_delay: '200ms' } },
    ];
    const p = startMls(['run', '--config', write('health', config('health', { models: ['m1'], sinks }))], env);
    try {
      await waitFor(() => p.stderr().includes('sink healthcheck failed'), 15_000, 'the healthcheck warning', 100, p.stderr);
      const line = JSON.parse(p.stderr().split('\n').find((l) => l.includes('sink healthcheck failed'))!) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 'warn', sink: 'hook' });
      expect(line.error).toContain(`127.0.0.1:${port}`);
      expect(line.error).toContain('ECONNREFUSED');
      // The other sink's check passed, and the daemon polls and delivers to it.
      await waitFor(() => /"sink":"files"[^\n]*"msg":"sink healthcheck passed"/.test(p.stderr()), 15_000, "the file sink's healthcheck", 100, p.stderr);
      await waitFor(() => readNdjsonTree(join(base, 'out')).length > 0, 15_000, 'entries in the file sink', 100, p.stderr);
      expect(p.child.exitCode).toBeNull();
      console.log(`healthcheck warning: ${JSON.stringify(line)}; file sink meanwhile: ${readNdjsonTree(join(base, 'out')).length} entries`);
    } finally {
      p.child.kill('SIGTERM');
      const end = await p.exited;
      expect(end.code, p.stderr()).toBe(0);
    }
  });

  it('keeps the process up with no model and no admin server until SIGTERM, then lets it end at once', { timeout: 60_000 }, async () => {
    // The config needs a model; the daemon gets none, so nothing but the daemon itself can hold the process.
    const file = write('idle', config('idle'));
    const dist = (path: string) => JSON.stringify(pathToFileURL(join(ROOT, 'dist', path)).href);
    const script = `
      const { loadConfig } = await import(${dist('cli/config.js')});
      const { createLogger } = await import(${dist('telemetry/logger.js')});
      const { Daemon } = await import(${dist('daemon/index.js')});
      const { waitForShutdown } = await import(${dist('cli/run.js')});
      const config = await loadConfig(process.argv[1]);
      const logger = createLogger({ level: 'info' });
      const daemon = await Daemon.start({ config: { ...config, models: [] }, logger });
      await waitForShutdown({ logger, timeoutMs: config.shutdown_timeout, stop: () => daemon.stop() });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, file], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => stderr.includes('mls daemon started') || child.exitCode !== null, 15_000, 'the daemon to start', 100, () => stderr);
      // Without a handle of its own, the process would end here, as soon as the start is done.
      await sleep(1_500);
      expect(child.exitCode, stderr).toBeNull();
    } finally {
      child.kill('SIGTERM');
    }
    const t0 = performance.now();
    expect(await exited, stderr).toBe(0);
    console.log(`idle daemon: up 1.5 s with no model and no admin server; exit 0 ${Math.round(performance.now() - t0)} ms after SIGTERM`);
    expect(stderr).toContain('"msg":"stopped"');
    // Ended by itself once stopped: no handle left for the shutdown's last resort to cut.
    expect(stderr).not.toContain('something still holds the process');
  });

  it('exits 78 with every problem when the config is invalid', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, stringify({ api: { base_url: 'not a url' }, models: [], sinks: [{ name: 'x', type: 'file' }] }));
    const r = await runMls(['run', '--config', file], env);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('api.base_url');
    expect(r.stderr).toContain('sinks[0].path');
  });
});

/** A port on 127.0.0.1 that nothing listens on (it was bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
