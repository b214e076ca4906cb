// Delivery lag: time from an entry becoming visible at the service (ingest delay 0, so
// visible at its own timestamp) to its line appearing in the file sink's output, watched
// by polling the files every 20 ms.
import { join } from 'node:path';
import { entryMs, follower } from './lib/follow.js';
import { startSimChild } from './lib/sim.js';
import { TOKEN, baseConfig, quantile, round, say, sleep, spawnDaemon, workDir, writeConfig } from './lib/util.js';

export async function run({ quick }) {
  const intervalMs = quick ? 2_000 : 10_000;
  const warmupMs = quick ? 10_000 : 30_000;
  const spanMs = quick ? 30_000 : 90_000;
  const models = ['lag-model-a', 'lag-model-b', 'lag-model-c'];
  const w = workDir('lag');
  const sim = await startSimChild({ token: TOKEN, models, ratePerSec: 20, pageSize: 500, seed: 5 });
  let d;
  try {
    const outDir = join(w.dir, 'out');
    const cfg = writeConfig(
      w.dir,
      baseConfig(sim.url, join(w.dir, 'state', 'state.db'), {
        poll: { interval: `${intervalMs}ms`, start_at: 'now' },
        models: models.map((id) => ({ id })),
        sinks: [{ name: 'files', type: 'file', path: join(outDir, '{model_id}.ndjson') }],
      }),
    );
    d = spawnDaemon(cfg);
    const from = Date.now() + warmupMs;
    const to = from + spanMs;
    const lags = [];
    let late = 0;
    const poll = follower(outDir, (line, arrival) => {
      const e = JSON.parse(line);
      const visible = entryMs(e.time);
      if (visible < from || visible > to) return;
      lags.push(arrival - visible);
    });
    // Watch until every entry visible in [from, to] had time to arrive (3 intervals + settle + 5 s).
    const end = to + 3 * intervalMs + 7_000;
    while (Date.now() < end) {
      poll();
      await sleep(20);
    }
    if (!d.alive()) throw new Error(`daemon exited; stderr: ${d.stderr().slice(-2000)}`);
    const stats = await sim.stats();
    lags.sort((a, b) => a - b);
    const target = intervalMs + 1000;
    for (const l of lags) if (l > target) late++;
    const r = {
      interval_ms: intervalMs,
      settle: 'auto',
      batch_max_delay_ms: 1000,
      entries_measured: lags.length,
      median_ms: Math.round(quantile(lags, 0.5)),
      p95_ms: Math.round(quantile(lags, 0.95)),
      p99_ms: Math.round(quantile(lags, 0.99)),
      max_ms: lags.length ? lags[lags.length - 1] : null,
      min_ms: lags.length ? lags[0] : null,
      share_over_target: round(late / Math.max(1, lags.length), 3),
      logs_requests: stats.logsRequests,
      target_ms: target,
    };
    say('lag', `median ${r.median_ms} ms, p95 ${r.p95_ms} ms over ${lags.length} entries (interval ${intervalMs / 1000} s)`);
    return r;
  } finally {
    await d?.stop();
    await sim.close();
    w.cleanup();
  }
}
