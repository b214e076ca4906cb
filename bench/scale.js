// Scale: one daemon polling 10,000 models (1 % of them active) under `rate_limit: 1200/s`,
// against the simulator in its own process. Steady-state CPU (share of one core, from
// /proc) and RSS of the daemon, requests per second and how often a quiet model was
// polled; then `mls status` (through the admin server) and a restart to its first logs
// request. The config lists the models inline. Last, the floor under the CPU figure: a bare
// HTTP client (bench/lib/http-floor.js) with the daemon's own connection pool, sending the
// same requests per second to the same simulator with the daemon stopped; the daemon's CPU
// is reported against it too. Then undici's Pool doing the same, for comparison.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCALE_MODELS, SCALE_RATE, scaleConfig, scaleModels, startScaleSim } from './lib/scale-load.js';
import { MLS, TOKEN, closedPort, cpuSeconds, median, memory, round, say, shippedNodeArgs, sleep, spawnDaemon, threadCpu, waitFor, workDir, writeConfig } from './lib/util.js';

const MODELS = SCALE_MODELS;
// MLS_BENCH_SCALE_ACTIVE=0 measures the quiet models' polling alone.
const ACTIVE = Number(process.env.MLS_BENCH_SCALE_ACTIVE ?? 100);

/** Milliseconds of three `mls status --json` runs with `cfgPath`, each checked to list every model. */
function timeStatus(cfgPath) {
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const st = performance.now();
    const r = spawnSync(process.execPath, [MLS, 'status', '--config', cfgPath, '--json'], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
    if (r.status !== 0) throw new Error(`mls status --config ${cfgPath} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
    if (JSON.parse(r.stdout).models.length !== MODELS) throw new Error(`mls status --config ${cfgPath} did not list every model`);
    runs.push(performance.now() - st);
  }
  return runs;
}

/** What docs/operating.md advises for thousands of models: a larger young generation. */
const DAEMON_NODE_ARGS = ['--max-semi-space-size=8'];
/** A client connected to the control socket at `socketPath` and one to the admin server on `adminPort`, both idle. */
async function idleClients(socketPath, adminPort) {
  const connect = (to) =>
    new Promise((resolve, reject) => {
      const s = createConnection(to, () => resolve(s)).once('error', reject);
      s.on('error', () => {}); // the daemon closes them when it stops
    });
  const control = await connect(socketPath);
  const admin = await connect({ host: '127.0.0.1', port: adminPort });
  // one request answered on a kept-alive connection, which then stays open and idle
  admin.write('GET /healthz HTTP/1.1\r\nHost: mls\r\n\r\n');
  await new Promise((resolve) => admin.once('data', resolve));
  return { close: () => [control, admin].forEach((s) => s.destroy()) };
}

const FLOOR_SCRIPT = fileURLToPath(new URL('./lib/http-floor.js', import.meta.url));

/** CPU of a bare HTTP client (`mls` or `undici`) sending `rate` logs requests/s for `seconds` to the simulator (its own process), asking for the models listed in `idsFile`. */
function httpFloor(client, simUrl, rate, seconds, idsFile) {
  // The daemon's young generation at this many models (DAEMON_NODE_ARGS).
  const r = spawnSync(process.execPath, [...shippedNodeArgs(), ...DAEMON_NODE_ARGS, FLOOR_SCRIPT, client, simUrl, TOKEN, String(rate), String(seconds), idsFile], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the bare HTTP client exited ${r.status}: ${r.stderr.slice(-1000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

export async function run({ quick }) {
  const warmupMs = quick ? 40_000 : 90_000;
  const measureMs = quick ? 30_000 : 60_000;
  const { ids, active } = scaleModels(ACTIVE);
  const w = workDir('scale');
  const sim = await startScaleSim(ids, active);
  const port = await closedPort();
  let d;
  try {
    const cfgPath = writeConfig(w.dir, scaleConfig(sim.url, w.dir, ids, { admin: { listen: `127.0.0.1:${port}` } }));
    d = spawnDaemon(cfgPath, { nodeArgs: DAEMON_NODE_ARGS });
    await sleep(warmupMs);
    if (!d.alive()) throw new Error(`daemon exited; stderr: ${d.stderr().slice(-2000)}`);
    const s0 = await sim.stats();
    const cpu0 = cpuSeconds(d.pid);
    const threads0 = threadCpu(d.pid);
    const t0 = performance.now();
    let peakRss = 0;
    const end = t0 + measureMs;
    while (performance.now() < end) {
      peakRss = Math.max(peakRss, memory(d.pid).rss);
      await sleep(500);
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpuPercent = ((cpuSeconds(d.pid) - cpu0) / seconds) * 100;
    const threads = threadCpu(d.pid);
    // Share of one core per kind of thread over the measured span (threads that exited in it are not counted).
    const byThread = Object.fromEntries(['main', 'v8', 'pool', 'other'].map((k) => [k, round(((threads[k] - threads0[k]) / seconds) * 100, 1)]));
    const rss = memory(d.pid).rss;
    const s1 = await sim.stats();
    const delta = (id) => (s1.logsAnswersByModel[id] ?? 0) - (s0.logsAnswersByModel[id] ?? 0);
    const quietIds = ids.filter((id) => !active.includes(id));
    const quietPolls = quietIds.map(delta);
    const quietPerMin = quietPolls.reduce((a, b) => a + b, 0) / quietPolls.length / (seconds / 60);
    const activePerMin = active.length === 0 ? 0 : active.map(delta).reduce((a, b) => a + b, 0) / active.length / (seconds / 60);
    const neverPolled = quietPolls.filter((n) => n === 0).length;
    const requestsPerSec = (s1.logsRequests - s0.logsRequests) / seconds;
    say('scale', `${MODELS} models: CPU ${round(cpuPercent, 1)} % of a core (${Object.entries(byThread).map(([k, v]) => `${k} ${v}`).join(', ')}), RSS ${round(rss / 2 ** 20, 1)} MB, ${round(requestsPerSec, 0)} requests/s; quiet ${round(quietPerMin, 2)}/min, active ${round(activePerMin, 1)}/min`);

    // mls status through the admin server; then the same with the models listed in a
    // models_file (one id per line) instead of inline, the way the README suggests for
    // thousands of models: same daemon, same admin server.
    const statusRuns = timeStatus(cfgPath);
    writeFileSync(join(w.dir, 'models.txt'), `${ids.join('\n')}\n`);
    const fileCfgPath = join(w.dir, 'config-models-file.yaml');
    const { models: _inline, ...rest } = JSON.parse(readFileSync(cfgPath, 'utf8'));
    writeFileSync(fileCfgPath, JSON.stringify({ ...rest, models_file: 'models.txt' }, null, 2));
    const fileStatusRuns = timeStatus(fileCfgPath);
    const warnings = d.stderr().split('\n').filter((l) => l.includes('"level":40')).length;
    // The young generation the daemon runs with: its command line says which.
    const semiSpace = readFileSync(`/proc/${d.pid}/cmdline`, 'utf8').split('\0').filter((a) => a.startsWith('--max-semi-space-size=')).pop();

    // Restart: SIGTERM, then a new process to its first logs request. The stop is timed with
    // clients that hold connections open and idle, as a stuck `mls settings apply` or a
    // scraper's kept-alive connection would: one on the control socket, one on the admin server.
    const idle = await idleClients(join(w.dir, 'state', 'state.db.sock'), port);
    const stopStarted = performance.now();
    await d.stop();
    const stopMs = performance.now() - stopStarted;
    idle.close();
    await sim.resetStats();
    d = spawnDaemon(cfgPath, { nodeArgs: DAEMON_NODE_ARGS });
    const spawnedWall = d.startedWall;
    const first = await waitFor(async () => (await sim.stats()).firstLogsRequestMs, { everyMs: 20, timeoutMs: 60_000, what: 'the first logs request after the restart' });
    const restartMs = first - spawnedWall;
    say('scale', `mls status ${Math.round(median(statusRuns))} ms (models in a models_file: ${Math.round(median(fileStatusRuns))} ms); restart to first request ${restartMs} ms; stop took ${Math.round(stopMs)} ms (with an idle control client and an idle admin connection)`);

    await d.stop();
    const quietIdsFile = join(w.dir, 'quiet-models.txt');
    writeFileSync(quietIdsFile, `${quietIds.join('\n')}\n`);
    const floor = httpFloor('mls', sim.url, Math.round(requestsPerSec), quick ? 15 : 20, quietIdsFile);
    const overFloor = cpuPercent / floor.cpu_percent;
    say('scale', `a bare HTTP client (the daemon's pool) at ${floor.requests_per_sec} requests/s: CPU ${floor.cpu_percent} % of a core (user ${floor.user_percent}, system ${floor.system_percent}); the daemon took ${round(overFloor, 2)}× that`);
    const undici = httpFloor('undici', sim.url, Math.round(requestsPerSec), quick ? 15 : 20, quietIdsFile);
    say('scale', `undici's Pool sending the same requests: CPU ${undici.cpu_percent} % of a core (${round(undici.cpu_percent / floor.cpu_percent, 2)}× the daemon's pool)`);
    return {
      models: MODELS,
      active: ACTIVE,
      active_entries_per_sec: SCALE_RATE,
      rate_limit: '1200/s',
      concurrency: 32,
      warmup_s: warmupMs / 1000,
      measured_s: round(seconds, 1),
      cpu_percent: round(cpuPercent, 1),
      cpu_main_thread_s: round(threads.main, 1),
      cpu_percent_by_thread: byThread,
      rss_mb: round(rss / 2 ** 20, 1),
      peak_rss_mb: round(peakRss / 2 ** 20, 1),
      requests_per_sec: round(requestsPerSec, 1),
      quiet_requests_per_min: round(quietPerMin, 2),
      quiet_models_not_polled_in_span: neverPolled,
      active_requests_per_min: round(activePerMin, 1),
      warnings_logged: warnings,
      daemon_semi_space: semiSpace ?? 'default',
      status_ms: Math.round(median(statusRuns)),
      status_runs_ms: statusRuns.map(Math.round),
      status_models_file_ms: Math.round(median(fileStatusRuns)),
      status_models_file_runs_ms: fileStatusRuns.map(Math.round),
      stop_ms: Math.round(stopMs),
      restart_first_request_ms: restartMs,
      http_floor_cpu_percent: floor.cpu_percent,
      http_floor_user_percent: floor.user_percent,
      http_floor_system_percent: floor.system_percent,
      http_floor_requests_per_sec: floor.requests_per_sec,
      cpu_over_http_floor: round(overFloor, 2),
      undici_floor_cpu_percent: undici.cpu_percent,
    };
  } finally {
    await d?.stop();
    await sim.close();
    w.cleanup();
  }
}
