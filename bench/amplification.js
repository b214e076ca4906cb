// Fetch amplification: entries the service sent ÷ entries delivered, for the naive
// `sliding` re-read, the `sparse` one with a fixed settle, and `sparse` with `settle: auto`
// (the default: the first re-read moves to an age learned from the delays), with late
// arrivals spread over the lookback. Time is scaled down 10× from production (lookback 5m → 30s, interval 10s →
// 1s, re-read age 30s → 3s, settle 2s → 200ms, late delays up to 250s → 25s). Both modes
// run side by side, each with its own simulator, and are checked against its ground truth.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimChild } from './lib/sim.js';
import { TOKEN, baseConfig, openStateReadonly, round, say, sleep, spawnDaemon, waitFor, workDir, writeConfig } from './lib/util.js';

const RATE = 20; // entries per second per model
const LATE_SHARE = 0.2;
const LATE_MAX_MS = 25_000;
const LOOKBACK_MS = 30_000;

const key = (e) => `${e.model_id}\u0000${e.time}\u0000${e.stream}\u0000${e.log}`;

function readLines(dir) {
  const out = [];
  for (const f of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line) out.push(JSON.parse(line));
  }
  return out;
}

async function runMode(mode, productionMs) {
  const models = ['amp-model-a', 'amp-model-b', 'amp-model-c'];
  const w = workDir(`amp-${mode}`);
  const sim = await startSimChild(
    { token: TOKEN, models, ratePerSec: RATE * (1 - LATE_SHARE), pageSize: 500, seed: 11 },
    { late: { ratePerSec: RATE * LATE_SHARE, maxDelayMs: LATE_MAX_MS } },
  );
  let d;
  try {
    const statePath = join(w.dir, 'state', 'state.db');
    const outDir = join(w.dir, 'out');
    const cfg = writeConfig(
      w.dir,
      baseConfig(sim.url, statePath, {
        poll: {
          interval: '1s',
          lookback: '30s',
          settle: mode === 'auto' ? 'auto' : '200ms',
          start_at: new Date(sim.startMs - 1000).toISOString(),
          max_window: '1h',
          rate_limit: 'none',
          reread: mode === 'sliding' ? { mode: 'sliding' } : { mode: 'sparse', ages: ['3s'] },
        },
        models: models.map((id) => ({ id })),
        sinks: [{ name: 'files', type: 'file', path: join(outDir, '{model_id}.ndjson') }],
      }),
    );
    d = spawnDaemon(cfg);
    await sleep(productionMs);
    const { atMs: stopMs } = await sim.stopProducing();
    // Drain: every entry produced is visible by stopMs + 25 s; wait until a read at the
    // lookback age has covered stopMs, then until the file sink has everything.
    const state = await waitFor(() => openStateReadonly(statePath), { what: 'the state file' });
    await waitFor(
      () => {
        if (!d.alive()) throw new Error('daemon exited');
        const cps = state.checkpoints();
        if (cps.length !== models.length) return false;
        if (mode !== 'sliding') {
          // The frontier of the final (lookback) re-read, from the planner's state; should its
          // format change, fall back to waiting out lookback + chunk + a few intervals.
          const frontier = (c) => {
            try {
              return JSON.parse(c.planState ?? '{}').f?.[String(LOOKBACK_MS)];
            } catch {
              return undefined;
            }
          };
          if (cps.some((c) => typeof frontier(c) !== 'number')) return Date.now() >= stopMs + LOOKBACK_MS * 1.2 + 8_000;
          return cps.every((c) => frontier(c) >= stopMs);
        }
        return cps.every((c) => (c.watermarkMs ?? 0) >= stopMs + LATE_MAX_MS + 2000);
      },
      { everyMs: 250, timeoutMs: LOOKBACK_MS + 60_000, what: `the ${mode} re-reads to cover the end of production` },
    );
    await waitFor(() => state.sinks()[0].cursor >= state.lastSeq(), { everyMs: 100, timeoutMs: 30_000, what: 'the file sink to catch up' });
    state.close();
    const stats = await sim.stats();
    await d.stop();
    const truthPath = join(w.dir, 'truth.ndjson');
    await sim.writeTruth(truthPath);
    const truth = readFileSync(truthPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const shipped = readLines(outDir);
    const counts = new Map();
    for (const e of shipped) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
    let missed = 0;
    let lateMissed = 0;
    let late = 0;
    for (const e of truth) {
      const isLate = e.log.startsWith('late entry ');
      if (isLate) late++;
      const k = key(e);
      const n = counts.get(k) ?? 0;
      if (n > 0) counts.set(k, n - 1);
      else {
        missed++;
        if (isLate) lateMissed++;
      }
    }
    const extra = [...counts.values()].reduce((a, n) => a + n, 0);
    return {
      production_s: productionMs / 1000,
      entries_produced: truth.length,
      late_entries: late,
      entries_delivered: shipped.length,
      entries_served: stats.entriesServed,
      logs_requests: stats.logsRequests,
      amplification: round(stats.entriesServed / shipped.length, 2),
      missed,
      late_missed: lateMissed,
      duplicated_or_unknown: extra,
    };
  } finally {
    await d?.kill();
    await sim.close();
    w.cleanup();
  }
}

export async function run({ quick }) {
  const productionMs = quick ? 45_000 : 180_000;
  say('amplification', `sliding, sparse and sparse with settle: auto side by side, ${productionMs / 1000} s of production each`);
  const [sliding, sparse, auto] = await Promise.all([runMode('sliding', productionMs), runMode('sparse', productionMs), runMode('auto', productionMs)]);
  say('amplification', `sliding ${sliding.amplification}×, sparse ${sparse.amplification}×, auto ${auto.amplification}×; missed ${sliding.missed} / ${sparse.missed} / ${auto.missed}`);
  return {
    scale: 'lookback 30s, interval 1s, re-read age 3s, settle 200ms (auto: learned); 20% of entries visible after U[0, 25s], the rest at once; 3 models × 20 entries/s',
    sliding,
    sparse,
    auto,
    ratio_sliding_to_sparse: round(sliding.amplification / sparse.amplification, 2),
  };
}
