// The file sink's output folder runs out of space while the daemon runs. The folder is a
// small tmpfs the test mounts (root only); a filler file takes nearly all of it. Expected:
// the daemon logs one clear error, stops pulling once its journal is full, leaves no
// partial NDJSON line, keeps its state file healthy, and resumes by itself once the filler
// is deleted — ending with every entry delivered once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { compareMultisets, entryKey, readNdjsonTree, readState, runMls, sleep, startMls, truthSince, waitFor, writeConfig, type MlsProcess } from './harness.js';

const TOKEN = 'tok-diskfull-test-4d2b77';
const MODELS = ['d1', 'd2'];
const TMPFS_BYTES = 2 * 1024 * 1024;
let dir: string;
let outDir: string;
let mounted = false;
let mountProblem = '';
let sim: Simulator | undefined;
let daemon: MlsProcess | undefined;
const extraMounts: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mls-diskfull-'));
  outDir = join(dir, 'out');
  mkdirSync(outDir, { mode: 0o700 });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES},mode=0700`, 'tmpfs', outDir], { stdio: 'pipe' });
    mounted = true;
  } catch (err) {
    mountProblem = String((err as { stderr?: Buffer }).stderr ?? err).trim();
    console.log(
      `disk-full test: SKIPPED — cannot mount a tmpfs here (${mountProblem || 'mount failed'}). ` +
        'It needs root (or CAP_SYS_ADMIN) to give the output folder a small, real filesystem; a file-size limit (ulimit -f) ' +
        'would only make writes fail with EFBIG, not ENOSPC, and would not prove resumption when space returns.',
    );
    return;
  }
  sim = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 50, historyMs: 10_000, longRate: 0, seed: 41 });
});

afterAll(async () => {
  if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null) {
    daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
  await sim?.close();
  for (const m of mounted ? [outDir, ...extraMounts] : []) {
    try {
      execFileSync('umount', [m], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', m], { stdio: 'pipe' });
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Where the checkpoints and cursors stand, and the daemon's last log lines: for a timeout's message. */
function progress(statePath: string, sinceMs: number): string {
  const st = readState(statePath);
  const where = st
    ? `watermarks (ms after ${sinceMs}): ${JSON.stringify([...st.watermarks].map(([m, w]) => [m, w === undefined ? null : w - sinceMs]))}; ` +
      `cursors: ${JSON.stringify([...st.cursors])}; last seq ${st.lastSeq}`
    : 'state file unreadable';
  return `${where}\nlast daemon lines:\n${daemon!.stderr().split('\n').slice(-15).join('\n')}`;
}

function freeBytes(path: string): number {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
}

/** NDJSON files of the output folder that end with a partial line. */
function partialLines(): string[] {
  return partialLinesIn(outDir);
}

function partialLinesIn(root: string): string[] {
  const bad: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ndjson')) {
        const t = readFileSync(p, 'utf8');
        if (t.length > 0 && !t.endsWith('\n')) bad.push(p);
      }
    }
  };
  walk(root);
  return bad;
}

describe('disk full under the file sink', () => {
  it('stops, says so once, keeps no partial line, and resumes by itself with nothing lost or duplicated', { timeout: 60_000 }, async (ctx) => {
    if (!mounted) {
      ctx.skip();
      return;
    }
    const statePath = join(dir, 'state', 'state.db');
    const config = writeConfig(dir, {
      api: { base_url: sim!.url, token: '${MLS_API_TOKEN}' },
      state: { path: statePath },
      poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-8s', max_window: '1m', rate_limit: 'none', reread: { ages: ['1s'] } },
      models: MODELS.map((id) => ({ id })),
      sinks: [{ name: 'archive', type: 'file', path: join(outDir, '{model_id}', '%Y-%m-%d.ndjson'), fsync: 'batch', batch: { max_entries: 200, max_delay: '50ms' } }],
      buffer: { max_entries: 1500, when_full: 'block' },
      shutdown_timeout: '10s',
    });
    // leave 48 KiB: a few hundred lines fit, then the disk is full
    const filler = join(outDir, 'filler.bin');
    writeFileSync(filler, Buffer.alloc(freeBytes(outDir) - 48 * 1024));
    const free0 = freeBytes(outDir);

    daemon = startMls(['run', '--config', config], { MLS_API_TOKEN: TOKEN });
    const errLines = () => daemon!.stderr().split('\n').filter((l) => l.includes('"level":"error"'));
    await waitFor(() => errLines().some((l) => l.includes('ENOSPC')), 20_000, 'the ENOSPC error');
    const fullAt = Date.now();
    await waitFor(() => daemon!.stderr().includes('journal full: polling paused'), 15_000, 'the journal to fill and polling to pause');
    // stalled: no request to the service, no byte more on disk, no partial line
    await sleep(1_000);
    const requestsBefore = sim!.stats().logsRequests;
    const freeStalled = freeBytes(outDir);
    await sleep(3_000);
    expect(sim!.stats().logsRequests, 'polling paused while the journal is full').toBe(requestsBefore);
    expect(partialLines()).toEqual([]);
    const shippedWhileFull = readNdjsonTree(outDir).length;
    expect(shippedWhileFull).toBeGreaterThan(0);
    const check = await runMls(['state', 'check', '--config', config], { MLS_API_TOKEN: TOKEN });
    expect(check.code, check.stderr).toBe(0);
    const errors = errLines();
    expect(errors, errors.join('\n')).toHaveLength(1); // one clear error, not one per retry
    expect(errors[0]).toMatch(/Could not write to the output files/);
    expect(errors[0]).toContain('ENOSPC');
    expect(daemon.child.exitCode).toBeNull();

    // space returns
    unlinkSync(filler);
    const freedAt = Date.now();
    await waitFor(() => daemon!.stderr().includes('journal has room again'), 25_000, 'polling to resume');
    const resumedAfterMs = Date.now() - freedAt;
    sim!.stopProducing();
    const stoppedAt = Date.now();
    await waitFor(() => {
      const st = readState(statePath);
      return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 2_500) && st.cursors.get('archive') === st.lastSeq;
    }, 25_000, 'catch-up and drain', 200, () => progress(statePath, stoppedAt));
    daemon.child.kill('SIGTERM');
    const end = await daemon.exited;
    expect(end.code, daemon.stderr()).toBe(0);

    const st = readState(statePath)!;
    const truth = truthSince(sim!.groundTruth(), st.starts);
    const figures = compareMultisets(truth.map(entryKey), readNdjsonTree(outDir).map(entryKey));
    console.log(
      `disk-full test: tmpfs of ${TMPFS_BYTES} bytes with ${free0} free; disk full for ${Math.round((freedAt - fullAt) / 1000)} s ` +
        `(${shippedWhileFull} entries written before, ${freeStalled} bytes free while stalled, ${errors.length} error line); ` +
        `resumed ${resumedAfterMs} ms after space returned; produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}`,
    );
    expect(figures.expected).toBeGreaterThan(1_500);
    expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });

  it('of the state folder: pauses with one clear error per component, and resumes by itself with nothing lost or duplicated', { timeout: 60_000 }, async (ctx) => {
    if (!mounted) {
      ctx.skip();
      return;
    }
    const stateDir = join(dir, 'state-on-tmpfs');
    mkdirSync(stateDir, { mode: 0o700 });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${16 * 1024 * 1024},mode=0700`, 'tmpfs', stateDir], { stdio: 'pipe' });
    extraMounts.push(stateDir);
    const sim2 = await startSimulator({ token: TOKEN, models: MODELS, ratePerSec: 50, historyMs: 10_000, longRate: 0, seed: 43 });
    try {
      const statePath = join(stateDir, 'state.db');
      const slowSink = join(dir, 'slow-sink.js');
      writeFileSync(
        slowSink,
        `export default async function createSink() {
          return {
            async healthcheck() { return { ok: true }; },
            async send() { await new Promise((r) => setTimeout(r, 400)); return { status: 'ok' }; },
            async flush() {},
            async close() {},
          };
        }\n`,
      );
      const out = join(dir, 'out-2');
      const config = writeConfig(dir, {
        api: { base_url: sim2.url, token: '${MLS_API_TOKEN}' },
        state: { path: statePath },
        poll: { interval: '300ms', lookback: '2s', settle: '100ms', start_at: '-8s', max_window: '1m', rate_limit: 'none', reread: { ages: ['1s'] } },
        models: MODELS.map((id) => ({ id })),
        sinks: [
          { name: 'archive', type: 'file', path: join(out, '{model_id}.ndjson'), batch: { max_entries: 200, max_delay: '50ms' } },
          // a sink whose sends take a while, so that an acknowledgement falls into the full disk
          { name: 'slow', type: 'module', path: slowSink, batch: { max_entries: 100, max_delay: '50ms' } },
        ],
        shutdown_timeout: '10s',
      }, 'state-full.yaml');
      daemon = startMls(['run', '--config', config], { MLS_API_TOKEN: TOKEN });
      await waitFor(() => readNdjsonTree(out).length > 500, 20_000, 'first entries');
      const filler = join(stateDir, 'filler.bin');
      writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(stateDir) - 16 * 1024)));
      const errLines = () => daemon!.stderr().split('\n').filter((l) => l.includes('"level":"error"'));
      await waitFor(() => errLines().some((l) => /disk is full|SQLITE_FULL/.test(l)), 20_000, 'the state write error');
      await sleep(4_000);
      const errors = errLines();
      expect(errors.length, errors.join('\n')).toBeLessThanOrEqual(MODELS.length + 2); // each poll loop and each delivery loop say it once
      expect(errors.join('\n')).not.toMatch(/stopped by an unexpected error/);
      expect(errors.join('\n')).toMatch(/delivery to this sink pauses/);
      expect(partialLinesIn(out)).toEqual([]);
      unlinkSync(filler);
      const freedAt = Date.now();
      await waitFor(() => readNdjsonTree(out).length > 0 && daemon!.stderr().includes('state file writable again; polling resumed'), 25_000, 'polling to resume');
      const resumedAfterMs = Date.now() - freedAt;
      sim2.stopProducing();
      const stoppedAt = Date.now();
      await waitFor(() => {
        const st = readState(statePath);
        return !!st && MODELS.every((m) => (st.watermarks.get(m) ?? 0) > stoppedAt + 2_500) && st.cursors.get('archive') === st.lastSeq && st.cursors.get('slow') === st.lastSeq;
      }, 25_000, 'catch-up and drain', 200, () => progress(statePath, stoppedAt));
      expect(daemon.stderr()).toContain('state file writable again; delivery resumed');
      daemon.child.kill('SIGTERM');
      const end = await daemon.exited;
      expect(end.code, daemon.stderr()).toBe(0);
      const st = readState(statePath)!;
      const figures = compareMultisets(truthSince(sim2.groundTruth(), st.starts).map(entryKey), readNdjsonTree(out).map(entryKey));
      console.log(
        `disk-full test (state folder): ${errors.length} error lines while full; resumed ${resumedAfterMs} ms after space returned; ` +
          `produced ${figures.expected}, delivered ${figures.delivered}, lost ${figures.lost}, duplicated ${figures.duplicated}`,
      );
      expect(figures).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    } finally {
      await sim2.close();
    }
  });
});
