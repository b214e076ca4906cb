// Restart: from process start to the first logs request at the service, with a state file
// holding 1,000 models and a 1-million-entry journal not yet delivered (and, for
// reference, the same models with an empty journal, `node -e 0` and `mls --version`).
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { StateStore } from '../dist/journal/store.js';
import { contentHash } from '../dist/dedupe/key.js';
import { parseEntryTime } from '../dist/time/timestamp.js';
import { renderContent } from '../dist/simulator/content.js';
import { summariseProfile } from './lib/profile.js';
import { MLS, ROOT, baseConfig, ensureDir, median, round, say, spawnDaemon, workDir, writeConfig } from './lib/util.js';

const MODELS = 1000;
const PER_MODEL = 1000;
const RATES = { multilineRate: 0.02, unicodeRate: 0.02, emptyRate: 0.005, longRate: 0.002 };

/** Builds the state through the StateStore API, as a previous run would have left it. */
function buildState(dir, models) {
  const emptyPath = join(dir, 'empty', 'state.db');
  const fullPath = join(dir, 'full', 'state.db');
  const t0 = Date.now();
  // Watermarks a minute old: a fresh window is due at once after the restart.
  const w1 = t0 - 120_000;
  const w2 = t0 - 60_000;
  const store = StateStore.open(fullPath);
  store.ensureSink('files');
  for (const id of models) {
    store.ensureCheckpoint(id, w1 - 60_000);
    const cp = store.beginWindow(id, w1 - 60_000, w1);
    store.commitPage(id, cp.fetchId, w1 - 60_000, [], { end: true }, w1);
  }
  store.close();
  ensureDir(join(dir, 'empty'));
  copyFileSync(fullPath, emptyPath);
  const store2 = StateStore.open(fullPath);
  let seed = 1;
  for (const id of models) {
    const cp = store2.beginWindow(id, w1, w2);
    const entries = new Array(PER_MODEL);
    for (let i = 0; i < PER_MODEL; i++) {
      const ms = w1 + Math.floor((i * (w2 - w1)) / PER_MODEL);
      const time = `${new Date(ms).toISOString().slice(0, 23)}${String(i).padStart(6, '0')}Z`;
      const { log, stream } = renderContent(seed++, RATES);
      const t = parseEntryTime(time);
      entries[i] = { entry: { time, log, stream }, timeNs: t.ns, hash: contentHash(stream, log) };
    }
    store2.commitPage(id, cp.fetchId, w1, entries, { end: true }, w2);
  }
  const journal = store2.journalSize();
  store2.close();
  return { emptyPath, fullPath, journalEntries: journal.entries, buildSeconds: (Date.now() - t0) / 1000 };
}

/** Wall time of a command from spawn to exit, median of `n`. */
function timeCommand(args, n) {
  const runs = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
    runs.push(performance.now() - t0);
  }
  return { median: Math.round(median(runs)), runs: runs.map(Math.round) };
}

export async function run({ quick }) {
  const reps = quick ? 3 : 5;
  const w = workDir('restart');
  let firstAt;
  let firstAtHrUs;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/rest/model/logs/get/') && firstAt === undefined) {
      firstAt = performance.now();
      firstAtHrUs = Number(process.hrtime.bigint() / 1000n);
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"success","details":[]}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  try {
    const models = Array.from({ length: MODELS }, (_, i) => `model-${String(i + 1).padStart(4, '0')}`);
    const built = buildState(w.dir, models);
    const dbBytes = statSync(built.fullPath).size;
    say('restart', `state built in ${round(built.buildSeconds, 1)} s: ${built.journalEntries} journal entries, ${Math.round(dbBytes / 2 ** 20)} MiB`);

    /** Restarts the daemon on a fresh copy of `pristine` `reps` times. */
    const measure = async (pristine, label, { reps: n = reps, profileDir } = {}) => {
      const runs = [];
      for (let i = 0; i < n; i++) {
        const runDir = join(w.dir, `${label}-${i}`);
        const statePath = join(ensureDir(join(runDir, 'state')), 'state.db');
        copyFileSync(pristine, statePath);
        const config = baseConfig(url, statePath, {
          poll: { interval: '10s' },
          models: models.map((id) => ({ id })),
          sinks: [{ name: 'files', type: 'file', path: join(runDir, 'out', '{model_id}.ndjson') }],
          buffer: { max_entries: 2_000_000, max_bytes: '4GiB' },
          // A profiled run exits through the shutdown timeout rather than delivering its backlog first.
          ...(profileDir ? { shutdown_timeout: '1s' } : {}),
        });
        const cfg = writeConfig(runDir, config);
        firstAt = undefined;
        const d = spawnDaemon(cfg, { nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] });
        const until = performance.now() + 30_000;
        while (firstAt === undefined && performance.now() < until && d.alive()) await new Promise((r) => setTimeout(r, 2));
        const ms = firstAt === undefined ? NaN : firstAt - d.startedAt;
        // A profiled run must exit by itself to write its profile: stop it at once.
        if (profileDir) await d.stop();
        else await d.kill();
        if (!Number.isFinite(ms)) throw new Error(`no logs request within 30 s (${label}); daemon stderr: ${d.stderr().slice(-2000)}`);
        runs.push(Math.round(ms));
        rmSync(runDir, { recursive: true, force: true });
      }
      return { median: Math.round(median(runs)), runs };
    };
    const empty = await measure(built.emptyPath, 'empty');
    const full = await measure(built.fullPath, 'full');
    // Where the start-up time goes: module loading and opening the state, each in a fresh process.
    const probe = (args) => JSON.parse(spawnSync(process.execPath, [join(ROOT, 'bench/lib/startup-probe.js'), ...args], { encoding: 'utf8' }).stdout);
    const probeCopy = join(w.dir, 'probe.db');
    copyFileSync(built.fullPath, probeCopy);
    const breakdown = {
      import_cli_ms: round(median([0, 1, 2].map(() => probe(['program']).import_ms)), 0),
      import_daemon_and_config_ms: round(median([0, 1, 2].map(() => probe(['daemon']).import_ms)), 0),
      open_state_1m_journal_ms: round(probe(['store', probeCopy]).open_ms, 0),
    };
    const profDir = ensureDir(join(w.dir, 'profile'));
    await measure(built.fullPath, 'profiled', { reps: 1, profileDir: profDir });
    const profFile = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    // Only the samples up to the first request: the start-up, not the shutdown that follows.
    const startupProfile = profFile ? summariseProfile(join(profDir, profFile), 12, { untilUs: firstAtHrUs }) : undefined;
    const noop = timeCommand(['-e', '0'], reps);
    const version = timeCommand([MLS, '--version'], reps);
    say('restart', `first request after ${full.median} ms (1M journal), ${empty.median} ms (empty journal); node -e 0 ${noop.median} ms, mls --version ${version.median} ms`);
    return {
      models: MODELS,
      journal_entries: built.journalEntries,
      state_file_mib: Math.round(dbBytes / 2 ** 20),
      state_build_seconds: round(built.buildSeconds, 1),
      first_request_ms: full.median,
      first_request_runs_ms: full.runs,
      first_request_empty_journal_ms: empty.median,
      first_request_empty_journal_runs_ms: empty.runs,
      node_noop_ms: noop.median,
      mls_version_ms: version.median,
      target_ms: 1000,
      breakdown,
      startup_profile_total_ms: startupProfile?.totalMs,
      startup_profile_top: startupProfile?.top.map(({ fn, url, selfMs }) => ({ fn, url, selfMs })),
      startup_profile_by_script: startupProfile?.byScript.slice(0, 10),
    };
  } finally {
    await new Promise((r) => server.close(r));
    server.closeAllConnections?.();
    w.cleanup();
  }
}
